"""Summing BM25 term scores and selecting the top k, exactly: a numba kernel, with a numpy one until it loads.

Both kernels compute the same float64 sums in the same order (the query's distinct terms in first-seen order,
each weighted by its count in the query), so they return identical rankings; ties are broken by corpus position
(lower first). The numba kernel (`_scoring_numba.py`) adds each posting into a per-thread accumulator and keeps
the best k in a bounded heap, reading only what it must (see there); the numpy kernel gathers the postings,
`bincount`s them and partitions the positive sums. Importing numba and loading its compiled kernel takes about
half a second, so it happens in a background thread (`load_fast_kernel`) while the index is verified, and
queries use the numpy kernel until it is ready; without numba, the numpy kernel serves every query.
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


_fast: Kernel | None = None
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
    global _fast
    try:
        fast = _compile()
        # One tiny call loads the cached machine code (or compiles it) here, not in the first query; with the
        # index's array types (read-only, as `Postings` always are), so that queries need no other version.
        indptr, postings, scores = np.array([0, 1], dtype=np.int64), np.zeros(1, np.int32), np.ones(1)
        for array in (indptr, postings, scores):
            array.setflags(write=False)
        fast(Columns(indptr, postings, scores, 1), np.zeros(1, np.int64), np.ones(1), 1)
    except Exception as exc:  # numba missing or broken: the numpy kernel gives the same results
        logger.info("numba BM25 kernel unavailable (%s); using numpy", exc)
        return
    _fast = fast


def _compile() -> Kernel:
    from koblex_tasks.corpus import _scoring_numba  # imports numba

    search = _scoring_numba.search
    buffers = threading.local()  # each searching thread has its own accumulator

    def fast(
        columns: Columns, terms: np.ndarray, weights: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        acc = getattr(buffers, "acc", None)
        if acc is None or len(acc) != columns.n_docs:
            acc = buffers.acc = np.zeros(columns.n_docs)
            buffers.touched = np.empty(columns.n_docs, np.int64)
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        indptr, postings, scores, _ = columns
        return search(indptr, postings, scores, terms, weights, k, acc, buffers.touched)

    return fast
