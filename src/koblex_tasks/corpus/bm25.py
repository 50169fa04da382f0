"""BM25 over `hierarchy + content` with bm25s, cached on disk and verified on load.

Parameters default to the official ones (bm25s' Lucene variant, k1=1.5, b=0.75). bm25s builds, saves and loads
the index (a term-major sparse matrix of precomputed per-paragraph term scores); queries are scored here, by
adding each distinct query term's column (times its count in the query) into one float32 array with scipy's
compiled sparse kernel, with no copy of the postings, then selecting the top k without sorting the whole
array. That is the same arithmetic as `bm25s.BM25.get_scores` (float32 sums) at a fraction of its cost.
"""

import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

try:  # the compiled kernel behind scipy's CSC matrix-vector product; public fallback below
    from scipy.sparse._sparsetools import csc_matvec as _csc_matvec
except ImportError:  # pragma: no cover - a scipy that moved its private module
    _csc_matvec = None

from koblex_tasks.corpus.cache import corpus_key, open_cached
from koblex_tasks.corpus.statutes import StatuteCorpus
from koblex_tasks.corpus.tokenizers import Tokenizer

if TYPE_CHECKING:
    import bm25s


@dataclass(frozen=True)
class BM25Params:
    k1: float = 1.5
    b: float = 0.75
    method: str = "lucene"


@dataclass(frozen=True)
class IndexHit:
    """A corpus position and its BM25 score."""

    index: int
    score: float


class BM25Index:
    """A bm25s index of one corpus with one tokenizer. Build with `BM25Index.open(...)`."""

    def __init__(
        self, retriever: "bm25s.BM25", tokenizer: Tokenizer, size: int, key: str, loaded_from_cache: bool
    ) -> None:
        self._retriever = retriever
        self._vocab: dict[str, int] = retriever.vocab_dict
        scores = retriever.scores
        self._data = np.ascontiguousarray(scores["data"], dtype=np.float32)
        self._indices = np.ascontiguousarray(scores["indices"])
        self._indptr = np.asarray(scores["indptr"], dtype=np.int64)
        self._num_docs = int(scores["num_docs"])
        self.tokenizer = tokenizer
        self.size = size
        self.key = key
        self.loaded_from_cache = loaded_from_cache

    @staticmethod
    def key_for(corpus: StatuteCorpus, tokenizer: Tokenizer, params: BM25Params) -> str:
        import bm25s

        return corpus_key(
            corpus, tokenizer=tokenizer.config(), params=params.__dict__, bm25s=bm25s.__version__, format=1
        )

    @classmethod
    def open(
        cls,
        corpus: StatuteCorpus,
        tokenizer: Tokenizer,
        params: BM25Params = BM25Params(),
        cache_dir: Path | None = None,
        use_cache: bool = True,
    ) -> "BM25Index":
        """Load the index from the cache if a verified entry exists; otherwise build it (and cache it)."""
        import bm25s

        key = cls.key_for(corpus, tokenizer, params)

        def load(entry: Path) -> "bm25s.BM25":
            retriever = bm25s.BM25.load(str(entry), show_progress=False)
            # Queries need the tokenizer's model; load it now, in the background. Not before the index:
            # Kiwi's start-up holds the GIL and would slow the load several-fold.
            _warm_up_in_background(tokenizer)
            return retriever

        retriever, loaded = open_cached(
            "bm25",
            key,
            load=load,
            build=lambda: cls._build(corpus, tokenizer, params),
            save=lambda retriever, directory: retriever.save(str(directory), show_progress=False),
            extra=lambda _: {"corpus_source": corpus.source, "size": len(corpus)},
            cache_dir=cache_dir,
            use_cache=use_cache,
            label="BM25",
        )
        return cls(retriever, tokenizer, len(corpus), key, loaded_from_cache=loaded)

    @staticmethod
    def _build(corpus: StatuteCorpus, tokenizer: Tokenizer, params: BM25Params) -> "bm25s.BM25":
        import bm25s

        tokens = tokenizer.tokenize([p.key for p in corpus.provisions])
        retriever = bm25s.BM25(k1=params.k1, b=params.b, method=params.method)
        retriever.index(tokens, show_progress=False)
        return retriever

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every paragraph (float32); a repeated query term counts once per occurrence."""
        counts = Counter(self._vocab[t] for t in query_tokens if t in self._vocab)
        return self._scores(counts)

    def _scores(self, counts: Counter[int]) -> np.ndarray:
        if self._retriever.nonoccurrence_array is not None:  # BM25L/BM25+ add a score for absent terms
            return self._retriever.get_scores_from_ids(list(counts.elements()))
        out = np.zeros(self._num_docs, dtype=np.float32)
        indptr, indices, data = self._indptr, self._indices, self._data
        if _csc_matvec is None:  # pragma: no cover - see the import
            for term, count in counts.items():
                start, end = indptr[term], indptr[term + 1]
                np.add.at(out, indices[start:end], data[start:end] * np.float32(count))
            return out
        for term, count in counts.items():
            start, end = int(indptr[term]), int(indptr[term + 1])
            if end > start:
                column = np.array([0, end - start], dtype=indices.dtype)
                weight = np.array([count], dtype=np.float32)
                _csc_matvec(self._num_docs, 1, column, indices[start:end], data[start:end], weight, out)
        return out

    def search_tokens(self, query_tokens: list[str], k: int) -> list[IndexHit]:
        """Top-k by BM25 score. Unknown terms are dropped; a query with no known term returns nothing."""
        counts = Counter(self._vocab[t] for t in query_tokens if t in self._vocab)
        k = min(k, self.size)
        if not counts or k <= 0:
            return []
        scores = self._scores(counts)
        top = top_k(scores, k)
        return [IndexHit(index=int(i), score=float(scores[i])) for i in top if scores[i] > 0]

    def search(self, query: str, k: int) -> list[IndexHit]:
        return self.search_tokens(self.tokenizer.tokenize([query])[0], k)

    def search_many(self, queries: list[str], k: int) -> list[list[IndexHit]]:
        """One tokenizer call for all queries (Kiwi analyses their new words in one batch), then each query."""
        return (
            [self.search_tokens(tokens, k) for tokens in self.tokenizer.tokenize(queries)] if queries else []
        )


def _warm_up_in_background(tokenizer: Tokenizer) -> None:
    """Load the tokenizer's model (Kiwi: a few seconds) while the caller finishes loading, if it has one."""
    warm_up = getattr(tokenizer, "warm_up", None)
    if warm_up is not None:
        threading.Thread(target=warm_up, name="koblex-tokenizer-warm-up", daemon=True).start()


# Above this many paragraphs the top k is found among the paragraphs scoring at least the k-th best of a
# strided sample (a lower bound of the k-th best overall), instead of partitioning the whole array.
_SAMPLE_SIZE = 20_000


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest scores, best first; ties broken by corpus position for determinism.

    For large arrays, the k-th best of every `stride`-th score is at most the k-th best overall, so every
    top-k paragraph (and every paragraph tied with the k-th) scores at least that much: only those few
    candidates are sorted. The result is the same as sorting everything.
    """
    if k <= 0:
        return np.arange(0)
    candidates = np.arange(len(scores)) if k >= len(scores) else _at_least_kth(scores, k)
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order][:k]


def _at_least_kth(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of every score at least the k-th best (0 < k < len(scores)), in corpus order."""
    n = len(scores)
    if n >= 4 * _SAMPLE_SIZE and k <= _SAMPLE_SIZE // 4:
        sample = scores[:: n // _SAMPLE_SIZE]
        bound = np.partition(sample, len(sample) - k)[len(sample) - k]
        candidates = np.flatnonzero(scores >= bound) if bound > 0 else np.flatnonzero(scores > 0)
        if len(candidates) >= k:
            return candidates
        # fewer than k positive scores: rank the whole array
    best = np.argpartition(-scores, k - 1)[:k]
    return np.flatnonzero(scores >= scores[best].min())
