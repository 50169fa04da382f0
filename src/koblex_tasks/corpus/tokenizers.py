"""Tokenizers for BM25 over Korean statutes.

- `kiwi` (default): Kiwi morphological analysis, keeping only content morphemes (nouns, verb and adjective stems,
  roots, adverbs, foreign words, hanja, numbers). Korean attaches particles and endings to words, so whitespace
  or regex tokens split "손해배상청구권을" and "손해배상청구권은" into different terms; morphemes do not.
- `official`: what the KoBLEX paper ran, bm25s' default regex tokenizer (lowercase, `\\w\\w+`) with English
  stopwords. Korean words keep their particles, which hurts recall; use it to reproduce the paper.
"""

import os
from collections.abc import Sequence
from functools import cached_property
from typing import Protocol

KIWI_CONTENT_TAGS = frozenset({"NNG", "NNP", "NNB", "NR", "NP", "VV", "VA", "XR", "MAG", "SL", "SH", "SN"})


class Tokenizer(Protocol):
    """Turns text into BM25 terms. `config()` enters the index cache key, so change it when behaviour changes."""

    name: str

    def config(self) -> dict[str, object]: ...

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]: ...


class OfficialTokenizer:
    """bm25s.tokenize with the settings of the official KoBLEX code (regex tokens, English stopwords)."""

    name = "official"

    def config(self) -> dict[str, object]:
        import bm25s

        return {"name": self.name, "stopwords": "en", "bm25s": bm25s.__version__}

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        import bm25s

        return bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)


class KiwiTokenizer:
    """Kiwi content morphemes; batches are analysed with Kiwi's own worker threads."""

    name = "kiwi"
    version = 1  # bump when the tag set or normalisation changes

    def __init__(self, num_workers: int | None = None) -> None:
        self.num_workers = num_workers if num_workers is not None else max(1, (os.cpu_count() or 1))

    @cached_property
    def _kiwi(self):
        from kiwipiepy import Kiwi

        return Kiwi(num_workers=self.num_workers)

    def config(self) -> dict[str, object]:
        import kiwipiepy

        return {
            "name": self.name,
            "version": self.version,
            "tags": sorted(KIWI_CONTENT_TAGS),
            "kiwipiepy": kiwipiepy.__version__,
        }

    def _terms(self, tokens) -> list[str]:
        return [t.form.lower() for t in tokens if t.tag in KIWI_CONTENT_TAGS]

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        texts = list(texts)
        if len(texts) == 1:
            return [self._terms(self._kiwi.tokenize(texts[0]))]
        return [self._terms(tokens) for tokens in self._kiwi.tokenize(texts)]


TOKENIZERS = {"kiwi": KiwiTokenizer, "official": OfficialTokenizer}


def get_tokenizer(name: str) -> Tokenizer:
    try:
        return TOKENIZERS[name]()
    except KeyError:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {sorted(TOKENIZERS)}") from None
