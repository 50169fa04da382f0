"""The numba kernel of `scoring.py`: sum a query's postings, keep the best k, leave the accumulator zeroed.

Imported only in the background thread that loads it (importing numba takes about half a second). Compiled
once into numba's cache (`cache=True`), then loaded from there. Orders by (score desc, position asc).

Two selections, chosen by the query's number of postings. Most queries touch a large part of the corpus (at
250K paragraphs a median KoBLEX question has 80K postings with the paper's tokens, 420K with Kiwi's), and for
them one sequential pass over the accumulator beats tracking touched paragraphs, whose first-touch test is a
branch the CPU cannot predict (it made summing three times slower). A pass in position order needs no tie
test: a later paragraph with an equal score ranks below. Queries with few postings visit only the paragraphs
they touched, recorded without a branch.

`accumulate` is bm25s' dense float32 sum, for the `bm25s` ordering.
"""

from typing import Any

import numba
import numpy as np

_SPARSE = 4  # visit only touched paragraphs when postings < paragraphs / _SPARSE


@numba.njit(cache=True, nogil=True, inline="always")
def _worse(value: float, doc: int, other_value: float, other_doc: int) -> bool:
    """True if (value, doc) ranks below (other_value, other_doc)."""
    return value < other_value or (value == other_value and doc > other_doc)


@numba.njit(cache=True, nogil=True)
def _sift_down(heap_val: Any, heap_doc: Any, size: int, value: float, doc: int) -> None:
    """Put (value, doc) at the root of a heap of `size` (worst at the root) and restore the heap."""
    parent = 0
    while True:
        child = 2 * parent + 1
        if child >= size:
            break
        if child + 1 < size and _worse(
            heap_val[child + 1], heap_doc[child + 1], heap_val[child], heap_doc[child]
        ):
            child += 1
        if _worse(value, doc, heap_val[child], heap_doc[child]):
            break
        heap_val[parent] = heap_val[child]
        heap_doc[parent] = heap_doc[child]
        parent = child
    heap_val[parent] = value
    heap_doc[parent] = doc


@numba.njit(cache=True, nogil=True)
def _sorted_positive(heap_val: Any, heap_doc: Any) -> tuple[Any, Any]:
    """Empty the heap best first, dropping its zero-score placeholders."""
    k = heap_val.size
    out_val = np.empty(k, np.float64)
    out_doc = np.empty(k, np.int64)
    for last in range(k - 1, -1, -1):  # pop the worst into the back
        out_val[last] = heap_val[0]
        out_doc[last] = heap_doc[0]
        if last > 0:
            _sift_down(heap_val, heap_doc, last, heap_val[last], heap_doc[last])
    m = 0
    while m < k and out_val[m] > 0.0:
        m += 1
    return out_doc[:m].copy(), out_val[:m].copy()


@numba.njit(cache=True, nogil=True)
def search(
    indptr: Any, postings: Any, scores: Any, terms: Any, weights: Any, k: int, acc: Any, touched: Any
) -> tuple[Any, Any]:
    """Top k (positions, sums) best first, positive sums only. `acc` is all zeros on entry and on return."""
    n_docs = acc.size
    total = 0
    for j in range(terms.size):
        total += indptr[terms[j] + 1] - indptr[terms[j]]
    heap_val = np.zeros(k, np.float64)  # placeholders: score 0 at a position past the end, beaten by any hit
    heap_doc = np.full(k, n_docs, np.int64)
    if total * _SPARSE < n_docs:
        n = 0
        for j in range(terms.size):
            term, weight = terms[j], weights[j]
            for p in range(indptr[term], indptr[term + 1]):
                doc = postings[p]
                before = acc[doc]
                touched[n] = doc
                n += before == 0.0  # term scores are positive: zero means first touch
                acc[doc] = before + scores[p] * weight
        for i in range(n):
            doc = touched[i]
            value = acc[doc]
            acc[doc] = 0.0
            if _worse(heap_val[0], heap_doc[0], value, doc):
                _sift_down(heap_val, heap_doc, k, value, doc)
    else:
        for j in range(terms.size):
            term, weight = terms[j], weights[j]
            for p in range(indptr[term], indptr[term + 1]):
                acc[postings[p]] += scores[p] * weight
        bound = 0.0
        for doc in range(n_docs):
            value = acc[doc]
            acc[doc] = 0.0
            if value > bound:
                _sift_down(heap_val, heap_doc, k, value, doc)
                bound = heap_val[0]
    return _sorted_positive(heap_val, heap_doc)


@numba.njit(cache=True, nogil=True)
def accumulate(indptr: Any, postings: Any, scores: Any, terms: Any, out: Any) -> None:
    """Add each term's column into `out`, term after term (bm25s' dense score array, in its order)."""
    for j in range(terms.size):
        term = terms[j]
        for p in range(indptr[term], indptr[term + 1]):
            out[postings[p]] += scores[p]
