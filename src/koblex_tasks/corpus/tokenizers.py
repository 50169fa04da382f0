"""Tokenizers for BM25 over Korean statutes.

- `kiwi` (default): Kiwi morphological analysis, keeping only content morphemes (nouns, verb and adjective stems,
  roots, adverbs, foreign words, hanja, numbers). Korean attaches particles and endings to words, so whitespace
  or regex tokens split "손해배상청구권을" and "손해배상청구권은" into different terms; morphemes do not.
- `official`: what the KoBLEX paper ran, bm25s' default regex tokenizer (lowercase, `\\w\\w+`) with English
  stopwords. Korean words keep their particles, which hurts recall; use it to reproduce the paper.

Besides `tokenize` (lists of terms, for queries), both tokenizers `encode` a whole corpus straight into term
ids (`Encoded`), which is what the index is built from: no list of strings per paragraph is ever held.
"""

import gc
import os
import re
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, islice
from typing import Any, Protocol, runtime_checkable

import numpy as np

_CHUNK = 20_000  # texts per step of a large tokenize() call
_ANALYSE_CHUNK = 50_000  # words per Kiwi batch
_EXPAND_BLOCK = 1 << 20  # word occurrences expanded into terms per numpy step

KIWI_CONTENT_TAGS = frozenset({"NNG", "NNP", "NNB", "NR", "NP", "VV", "VA", "XR", "MAG", "SL", "SH", "SN"})

# bm25s 0.3's `STOPWORDS_EN` (the list `stopwords="en"` selects), copied so that queries need not import
# bm25s and scipy; tests/corpus/test_tokenizers.py checks it is still bm25s' list.
STOPWORDS_EN = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)
# bm25s' token pattern is `(?u)\b\w\w+\b`. A match can only start where a run of word characters starts and
# greedily takes the whole run, so its matches are exactly the runs of two or more word characters: the same
# as `\w\w+` without the boundary checks, which the regex engine then need not evaluate (about 30% faster).
# tests/corpus/test_tokenizers.py compares both patterns on the corpus, the questions and Unicode edge cases.
BM25S_TOKEN_PATTERN = r"(?u)\b\w\w+\b"
_WORD_RUNS = re.compile(r"\w\w+").findall


def is_content_tag(tag: str) -> bool:
    """True for a content tag, including Kiwi's regular/irregular conjugation variants (`VV-R`, `VA-I`)."""
    return tag.partition("-")[0] in KIWI_CONTENT_TAGS


@dataclass(frozen=True)
class Encoded:
    """A corpus as term ids: every document's terms in order, flattened, with each document's length."""

    vocabulary: list[str]  # term id -> term
    term_ids: np.ndarray  # int32, the terms of document 0, then of document 1, ...
    lengths: np.ndarray  # int64, number of terms of each document


class Tokenizer(Protocol):
    """Turns text into BM25 terms. `config()` enters the index cache key, so change it when behaviour changes."""

    name: str

    def config(self) -> dict[str, object]: ...

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]: ...


@runtime_checkable
class CorpusEncoder(Protocol):
    """A tokenizer that can also encode a corpus into term ids without building per-document lists."""

    def encode(self, texts: Iterable[str]) -> Encoded: ...


class _Ids(dict[str, int]):
    """Assigns the next id to each new key on lookup (`ids[key]`), in first-seen order; C speed for known keys."""

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        super().__init__(dict.fromkeys(reserved, -1))  # reserved keys map to -1 and take no id
        self.next = 0

    def __missing__(self, key: str) -> int:
        value = self[key] = self.next
        self.next += 1
        return value

    def keys_by_id(self) -> list[str]:
        return [key for key, value in self.items() if value >= 0]


@contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: a corpus pass creates millions of short-lived lists, and each
    automatic collection would walk every live object (it tripled tokenization time); nothing here is cyclic."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _flatten(ids: _Ids, documents: Iterable[Iterable[str]]) -> tuple[np.ndarray, np.ndarray]:
    """Each document's ids (reserved terms, -1, dropped) and the documents' lengths."""
    flat, lengths = array("i"), array("q")
    lookup = ids.__getitem__
    with _no_gc():
        for terms in documents:
            before = len(flat)
            flat.extend(map(lookup, terms))
            lengths.append(len(flat) - before)
    term_ids = np.frombuffer(flat, dtype=np.int32) if flat else np.zeros(0, dtype=np.int32)
    doc_lengths = np.frombuffer(lengths, dtype=np.int64) if lengths else np.zeros(0, dtype=np.int64)
    keep = term_ids >= 0
    if keep.all():
        return term_ids, doc_lengths
    doc_of = np.repeat(np.arange(len(doc_lengths)), doc_lengths)
    return term_ids[keep], np.bincount(doc_of[keep], minlength=len(doc_lengths)).astype(np.int64)


def _expand(values: np.ndarray, starts: np.ndarray, counts: np.ndarray, items: np.ndarray) -> np.ndarray:
    """`values[starts[i] : starts[i] + counts[i]]` for each i of `items`, concatenated."""
    n = counts[items]
    before = _offsets(n)
    return values[np.arange(int(before[-1])) + np.repeat(starts[items] - before[:-1], n)]


def _offsets(counts: np.ndarray) -> np.ndarray:
    """Start of each run of `counts` items, and the total at the end (length len(counts) + 1)."""
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def encode_with(tokenizer: Tokenizer, texts: Iterable[str]) -> Encoded:
    """`tokenizer.encode(texts)` if it has one, else its terms turned into ids here."""
    if isinstance(tokenizer, CorpusEncoder):
        return tokenizer.encode(texts)
    ids = _Ids()
    term_ids, lengths = _flatten(ids, chain.from_iterable(map(tokenizer.tokenize, _chunks(texts))))
    return Encoded(ids.keys_by_id(), term_ids, lengths)


def _chunks(texts: Iterable[str]) -> Iterator[list[str]]:
    """`texts` in lists of `_CHUNK`, so a tokenizer's per-call batching still applies."""
    it = iter(texts)
    while chunk := list(islice(it, _CHUNK)):
        yield chunk


class OfficialTokenizer:
    """bm25s.tokenize with the settings of the official KoBLEX code (regex tokens, English stopwords).

    The same terms as `bm25s.tokenize(texts, stopwords="en", return_ids=False)` (lowercase, then the regex,
    then stopwords out), computed here without bm25s' per-call vocabulary and per-text stopword set.
    """

    name = "official"
    version = (
        2  # 1: bm25s.tokenize itself; 2: the same terms computed here (cache entries of 1 are not reused)
    )

    def config(self) -> dict[str, object]:
        return {"name": self.name, "stopwords": "en", "pattern": BM25S_TOKEN_PATTERN, "version": self.version}

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        stop = STOPWORDS_EN
        return [[t for t in _WORD_RUNS(text.lower()) if t not in stop] for text in texts]

    def encode(self, texts: Iterable[str]) -> Encoded:
        ids = _Ids(reserved=STOPWORDS_EN)
        term_ids, lengths = _flatten(ids, (_WORD_RUNS(text.lower()) for text in texts))
        return Encoded(ids.keys_by_id(), term_ids, lengths)


# What analysed words a later corpus build may reuse: a read-only view of word -> content terms.
WordTerms = Mapping[str, tuple[str, ...]]


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
        # Words analysed by earlier builds (the on-disk word cache), consulted before Kiwi; set by the index.
        self.known_words: WordTerms = {}
        self.analysed_words = 0  # words Kiwi analysed in this process (statistics for logs and benchmarks)
        self.new_words: dict[str, tuple[str, ...]] = {}  # what the last `encode` had Kiwi analyse
        self.query_words: dict[str, tuple[str, ...]] = {}  # what `tokenize` had Kiwi analyse (wordcache.py)

    @cached_property
    def _kiwi(self) -> Any:  # a kiwipiepy.Kiwi (untyped library)
        from kiwipiepy import Kiwi

        kiwi = Kiwi(num_workers=self.num_workers, load_typo_dict=False, load_multi_dict=False)
        kiwi.tokenize("초기화")  # Kiwi initialises lazily; pay it here, not in the first real call
        return kiwi

    def warm_up(self) -> None:
        """Load Kiwi's model now (a second or more) instead of at its first unknown word."""
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
        terms: list[tuple[str, ...]] = []
        with self._kiwi_lock:
            kiwi = self._kiwi
            if len(words) == 1:
                return [self._content(kiwi.tokenize(words[0]))]
            # in slices: Kiwi holds a batch's inputs and results until the batch is consumed
            for start in range(0, len(words), _ANALYSE_CHUNK):
                terms.extend(map(self._content, kiwi.tokenize(words[start : start + _ANALYSE_CHUNK])))
            self.analysed_words += len(words)
        return terms

    @staticmethod
    def _content(tokens: Iterable[Any]) -> tuple[str, ...]:
        return tuple(t.form.lower() for t in tokens if is_content_tag(t.tag))

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
        self._resolve(chain.from_iterable(split), known, remember=True)
        lookup = known.__getitem__
        return [list(chain.from_iterable(map(lookup, words))) for words in split]

    def _resolve(self, words: Iterable[str], known: dict[str, tuple[str, ...]], remember: bool) -> list[str]:
        """Put each word's terms into `known` (memo, earlier builds, else Kiwi); returns the words Kiwi did."""
        missing: list[str] = []
        sources: tuple[Callable[[str], tuple[str, ...] | None], ...] = (self._cache.get, self.known_words.get)
        for word in words:
            if word not in known:
                for source in sources:
                    terms = source(word)
                    if terms is not None:
                        known[word] = terms
                        break
                else:
                    known[word] = ()  # placeholder, so a word is queued once
                    missing.append(word)
        if missing:
            analysed = self.analyse_words(missing)
            known.update(zip(missing, analysed, strict=True))
            if remember:
                self._remember(missing, analysed)
                if len(missing) <= self.cache_size:  # queries' words, not a corpus tokenized at once
                    self.query_words.update(zip(missing, analysed, strict=True))
        return missing

    def encode(self, texts: Iterable[str]) -> Encoded:
        """Term ids of a corpus: its distinct words are analysed once (in one multi-threaded Kiwi batch) and
        each word occurrence expands to its word's term ids, with numpy. Sets `new_words` to what Kiwi did."""
        words = _Ids()
        word_ids, words_per_doc = _flatten(words, (text.split() for text in texts))
        distinct = words.keys_by_id()
        del words
        known: dict[str, tuple[str, ...]] = {}
        missing = self._resolve(distinct, known, remember=False)
        self.new_words = {word: known[word] for word in missing}
        terms = _Ids()
        term_ids, terms_per_word = _flatten(terms, map(known.__getitem__, distinct))
        del known, distinct, missing
        # word w's terms are term_ids[starts[w] : starts[w + 1]]; every occurrence expands to them, in blocks
        # so that the index arithmetic never holds more than a block (it is 8 bytes per occurrence)
        starts = _offsets(terms_per_word)
        blocks = [
            _expand(term_ids, starts, terms_per_word, word_ids[i : i + _EXPAND_BLOCK])
            for i in range(0, len(word_ids), _EXPAND_BLOCK)
        ]
        counts = terms_per_word.astype(np.int32)[word_ids]  # terms of each word occurrence
        nonempty = words_per_doc > 0
        lengths = np.zeros(len(words_per_doc), dtype=np.int64)
        if len(counts):
            lengths[nonempty] = np.add.reduceat(
                counts, _offsets(words_per_doc)[:-1][nonempty], dtype=np.int64
            )
        expanded = np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.int32)
        return Encoded(terms.keys_by_id(), expanded, lengths)

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
