"""Tokenizers for BM25 over Korean statutes.

- `kiwi` (default): Kiwi morphological analysis, keeping only content morphemes (nouns, verb and adjective stems,
  roots, adverbs, foreign words, hanja, numbers). Korean attaches particles and endings to words, so whitespace
  or regex tokens split "손해배상청구권을" and "손해배상청구권은" into different terms; morphemes do not.
- `official`: what the KoBLEX paper ran, bm25s' default regex tokenizer (lowercase, `\\w\\w+`) with English
  stopwords. Korean words keep their particles, which hurts recall; use it to reproduce the paper.
"""

import os
import threading
from collections.abc import Sequence
from functools import cached_property
from itertools import chain
from typing import Any, Protocol

_CHUNK = 20_000  # texts per step of a large tokenize() call

KIWI_CONTENT_TAGS = frozenset({"NNG", "NNP", "NNB", "NR", "NP", "VV", "VA", "XR", "MAG", "SL", "SH", "SN"})


def is_content_tag(tag: str) -> bool:
    """True for a content tag, including Kiwi's regular/irregular conjugation variants (`VV-R`, `VA-I`)."""
    return tag.partition("-")[0] in KIWI_CONTENT_TAGS


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
    """Kiwi content morphemes of each whitespace-separated word, analysed on its own and memoised.

    Analysing each word (eojeol) without its neighbours makes a word's terms the same wherever it occurs, so a
    batch and single texts give identical terms, and a word seen before costs a dictionary lookup: statutes
    repeat their words heavily (the 5,423-paragraph sample has 140K words but 31K distinct ones), which cuts
    Kiwi's work several-fold. On the shared corpus recall@10 of the gold provisions did not drop
    (see bench/bench_retrieval.py). Kiwi's multi-word and typo dictionaries are not loaded: multi-word
    entries cannot match a single word, and the typo dictionary changed no word of the corpus or questions.
    """

    name = "kiwi"
    # 1: whole-text analysis, exact tags. 2: per-word analysis (memoised), no multi-word/typo dictionaries,
    # `VV-R`/`VV-I`/`VA-I` conjugation variants count as their content tag.
    version = 2

    def __init__(self, num_workers: int | None = None, cache_size: int = 500_000) -> None:
        self.num_workers = num_workers if num_workers is not None else max(1, (os.cpu_count() or 1))
        self.cache_size = cache_size
        self._cache: dict[str, tuple[str, ...]] = {}
        self._cache_lock = threading.Lock()
        self._kiwi_lock = threading.Lock()

    @cached_property
    def _kiwi(self) -> Any:  # a kiwipiepy.Kiwi (untyped library)
        from kiwipiepy import Kiwi

        kiwi = Kiwi(num_workers=self.num_workers, load_typo_dict=False, load_multi_dict=False)
        kiwi.tokenize("초기화")  # Kiwi initialises lazily; pay it here, not in the first real call
        return kiwi

    def warm_up(self) -> None:
        """Load Kiwi's model now (a few seconds) instead of at the first query."""
        with self._kiwi_lock:
            self._kiwi  # noqa: B018

    def config(self) -> dict[str, object]:
        import kiwipiepy

        return {
            "name": self.name,
            "version": self.version,
            "tags": sorted(KIWI_CONTENT_TAGS),
            "kiwipiepy": kiwipiepy.__version__,
        }

    def analyse_words(self, words: list[str]) -> list[tuple[str, ...]]:
        """Content terms of each word, analysed independently (no cache). Words must not contain spaces."""
        if not words:
            return []
        with self._kiwi_lock:
            kiwi = self._kiwi
            results = [kiwi.tokenize(words[0])] if len(words) == 1 else kiwi.tokenize(words)
            terms = [tuple(t.form.lower() for t in tokens if is_content_tag(t.tag)) for tokens in results]
        return terms

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        # In chunks, so a corpus never holds all its split words at once; `known` spans the chunks, so a word
        # is analysed once per call even when the memo cannot keep it.
        if not isinstance(texts, list | tuple):
            texts = list(texts)
        known: dict[str, tuple[str, ...]] = {}
        out: list[list[str]] = []
        for start in range(0, len(texts), _CHUNK):
            out.extend(self._tokenize_chunk(texts[start : start + _CHUNK], known))
        return out

    def _tokenize_chunk(self, texts: Sequence[str], known: dict[str, tuple[str, ...]]) -> list[list[str]]:
        split = [text.split() for text in texts]
        missing: list[str] = []
        cached = self._cache.get
        for words in split:
            for word in words:
                if word not in known:
                    terms = cached(word)
                    if terms is None:
                        known[word] = ()  # placeholder, so a word is queued once
                        missing.append(word)
                    else:
                        known[word] = terms
        if missing:
            analysed = self.analyse_words(missing)
            known.update(zip(missing, analysed, strict=True))
            self._remember(missing, analysed)
        lookup = known.__getitem__
        return [list(chain.from_iterable(map(lookup, words))) for words in split]

    def _remember(self, words: list[str], analysed: list[tuple[str, ...]]) -> None:
        """Keep new words for later calls, within `cache_size` (a corpus-sized batch is not kept)."""
        if len(words) > self.cache_size:
            return
        with self._cache_lock:
            if len(self._cache) + len(words) > self.cache_size:
                self._cache = {}
            self._cache.update(zip(words, analysed, strict=True))


TOKENIZERS = {"kiwi": KiwiTokenizer, "official": OfficialTokenizer}


def get_tokenizer(name: str) -> Tokenizer:
    try:
        return TOKENIZERS[name]()
    except KeyError:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {sorted(TOKENIZERS)}") from None
