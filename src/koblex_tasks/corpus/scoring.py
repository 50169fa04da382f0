"""Summing BM25 term scores and selecting the top k, exactly: a numba kernel, with a numpy one until it loads.

Two orderings. `float64` (`kernel()`): both kernels compute the same float64 sums in the same order (the
query's distinct terms in first-seen order, each weighted by its count in the query), so they return identical
rankings; ties are broken by corpus position (lower first). The numba kernel (`_scoring_numba.py`) adds each
posting into a per-thread accumulator and keeps the best k in a bounded heap, reading only what it must (see
there); the numpy kernel gathers the postings, `bincount`s them and partitions the positive sums. Importing
numba and loading its compiled kernels from numba's on-disk cache takes about half a second, so it happens in
a background thread (`load_fast_kernel`) started with the retriever, while the corpus and index load. Queries
do not wait for it: at 250K paragraphs the numpy kernels answer a first query in 3-30 ms, while waiting cost
0.75-0.97 s of a warm start on a loaded machine; without numba, the numpy kernels serve every query.

`bm25s` (`bm25s_top_k`): bm25s' numpy backend, which the official scripts ran: it sums float32 term scores
into a dense float32 array once per query token occurrence, then takes `np.argpartition(scores, -k)[-k:]` and
sorts that by `np.flip(np.argsort(...))`. Where scores tie, which rows it keeps and in what order is whatever
numpy's selection algorithms (SIMD variants included) do with the whole array, so no other rule reproduces it:
the same numpy calls run on the same array, summed by numba (or `np.add.at`, bm25s' own, until numba loads).
A shortcut for tie-free lists was tried and dropped: at 250K paragraphs all 226 questions have a tie in their
top 101 with the paper's tokens.
"""

import logging
import threading
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

logger = logging.getLogger(__name__)


class Columns(NamedTuple):
    """An index's term-major postings: term t's paragraphs are `postings[indptr[t]:indptr[t + 1]]`."""

    indptr: np.ndarray  # int64
    postings: np.ndarray  # int32 paragraph positions, ascending within a term
    scores: np.ndarray  # float64 term scores, > 0
    n_docs: int
    scores32: np.ndarray  # bm25s' float32 term scores (the `bm25s` ordering)


# (columns, distinct query terms, their counts as float64, k) -> (positions best first, their scores)
Kernel = Callable[[Columns, np.ndarray, np.ndarray, int], tuple[np.ndarray, np.ndarray]]


def numpy_kernel(
    columns: Columns, terms: np.ndarray, weights: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The reference kernel: gather the terms' postings, `bincount` them (in term order), rank the positives."""
    starts, ends = columns.indptr[terms], columns.indptr[terms + 1]
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    offsets = np.cumsum(lengths) - lengths
    gather = np.arange(total) + np.repeat(starts - offsets, lengths)
    weighted = columns.scores[gather] * np.repeat(weights, lengths)
    sums = np.bincount(columns.postings[gather], weights=weighted, minlength=columns.n_docs)
    positive = np.flatnonzero(sums > 0)
    return _best(positive, sums[positive], k)


def _best(positions: np.ndarray, values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best (value desc, position asc) of candidates given in ascending position order."""
    if len(values) > k:
        kth = np.partition(values, len(values) - k)[len(values) - k]
        keep = values >= kth
        positions, values = positions[keep], values[keep]
    order = np.lexsort((positions, -values))[:k]
    return positions[order].astype(np.int64), values[order]


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest of a dense score array, best first; ties broken by position (dense retrieval)."""
    if k <= 0:
        return np.arange(0)
    positions, _ = _best(np.arange(len(scores)), scores, k)
    return positions


def bm25s_top_k(columns: Columns, occurrences: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """bm25s' top k (positions, float32 scores as float64) for the query's token occurrences. bm25s refuses
    k > corpus size; here that returns the whole corpus in its order."""
    k = min(k, columns.n_docs)
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    scores = _buffer(columns.n_docs)  # reused: a fresh array would page-fault on every query
    try:
        accumulate_bm25s(columns, occurrences, scores)
        return _bm25s_select(scores, k)
    finally:
        scores.fill(0)


def accumulate_bm25s(columns: Columns, occurrences: np.ndarray, scores: np.ndarray) -> None:
    """Add bm25s' float32 term scores into the dense `scores`, a column per query token occurrence, in order:
    the array bm25s ranks (numba once loaded, else bm25s' own `np.add.at`)."""
    if _fast_accumulate is not None:
        _fast_accumulate(columns.indptr, columns.postings, columns.scores32, occurrences, scores)
        return
    for term in occurrences.tolist():
        start, end = columns.indptr[term], columns.indptr[term + 1]
        np.add.at(scores, columns.postings[start:end], columns.scores32[start:end])


def _buffer(n_docs: int) -> np.ndarray:
    """This thread's zeroed float32 score array for a corpus of `n_docs` (the caller zeroes it again)."""
    scores = getattr(_buffers_local, "scores32", None)
    if scores is None or len(scores) != n_docs:
        scores = _buffers_local.scores32 = np.zeros(n_docs, dtype=np.float32)
    return scores


def _bm25s_select(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """bm25s 0.2's `selection._topk_numpy(scores, k, sorted=True)` (a slice where it takes `range(-k, 0)`)."""
    partitioned = np.argpartition(scores, -k)[-k:]
    partitioned_scores = np.take(scores, partitioned)
    order = np.flip(np.argsort(partitioned_scores))
    return partitioned[order].astype(np.int64), partitioned_scores[order].astype(np.float64)


_fast: Kernel | None = None
_fast_search: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None
_fast_accumulate: Callable[..., None] | None = None
_buffers_local = threading.local()  # each searching thread has its own accumulators
_loading: threading.Thread | None = None
_loading_lock = threading.Lock()


def kernel() -> Kernel:
    """The numba kernel once it is loaded, else the numpy one (identical results)."""
    return _fast or numpy_kernel


def load_fast_kernel(wait: bool = False) -> None:
    """Import numba and load (or compile, once, into numba's cache) the fast kernel in a background thread."""
    global _loading
    with _loading_lock:
        if _loading is None and _fast is None:
            _loading = threading.Thread(target=_load, name="koblex-bm25-kernel", daemon=True)
            _loading.start()
        thread = _loading
    if wait and thread is not None:
        thread.join()


def _load() -> None:
    global _fast, _fast_search, _fast_accumulate
    try:
        from koblex_tasks.corpus import _scoring_numba  # imports numba

        search, accumulate = _scoring_numba.search, _scoring_numba.accumulate
        # One tiny call each loads the cached machine code (or compiles it) here, not in the first query;
        # with read-only arrays, as `Postings` always are, so that queries need no other version.
        indptr, postings = _read_only(np.array([0, 1], dtype=np.int64)), _read_only(np.zeros(1, np.int32))
        terms = np.zeros(1, np.int64)
        search(
            indptr, postings, _read_only(np.ones(1)), terms, np.ones(1), 1, np.zeros(1), np.empty(1, np.int64)
        )
        accumulate(indptr, postings, _read_only(np.ones(1, np.float32)), terms, np.zeros(1, np.float32))
    except Exception as exc:  # numba missing or broken: the numpy kernel gives the same results
        logger.info("numba BM25 kernel unavailable (%s); using numpy", exc)
        return
    _fast_search, _fast_accumulate = search, accumulate
    _fast = _fast_float64


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _fast_float64(
    columns: Columns, terms: np.ndarray, weights: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    if k <= 0 or _fast_search is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    acc = getattr(_buffers_local, "acc", None)
    if acc is None or len(acc) != columns.n_docs:
        acc = _buffers_local.acc = np.zeros(columns.n_docs)
        _buffers_local.touched = np.empty(columns.n_docs, np.int64)
    touched = _buffers_local.touched
    return _fast_search(columns.indptr, columns.postings, columns.scores, terms, weights, k, acc, touched)
