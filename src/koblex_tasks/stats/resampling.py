"""The one source of resamples: seeded item-count matrices, sign-flip matrices, and means over them.

Every bootstrap in the project (system and stratum intervals, paired differences, the judge audit's
alpha) draws its resamples from :func:`count_chunks`, and every sign-flip test from :func:`sign_chunks`.
Draws depend only on (number of items, number of resamples, seed), and each statistic resamples exactly
the items it is computed on (a system's scored items, a pair's shared items), so a vector gets the same
resamples, and with :func:`exact_grid` the bit-identical interval, alone or as a row of a matrix.

Work is vectorised: a resampled mean is a row of ``counts @ values``, so 10,000 resamples of dozens of
systems are a few matrix products. Resample matrices come in chunks of at most ``CHUNK_CELLS`` cells and
(rows x resamples) work matrices stay under ``BLOCK_BYTES``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np

CHUNK_CELLS = 1 << 21
"""Cells per drawn resample chunk (~16 MB as float64); it fixes the random stream, so never change it."""
BLOCK_BYTES = 16 << 20
"""Bytes of one (rows x resamples) work matrix."""
CACHE_CELLS = 1 << 23
"""Count chunks are kept between row blocks up to this many cells (~64 MB), else redrawn from the seed."""


def chunk_rows(n_items: int) -> int:
    """Resamples per chunk; depends on ``n_items`` only, so a seed always yields the same stream."""
    return max(1, CHUNK_CELLS // max(n_items, 1))


def block_rows(n_columns: int) -> int:
    """Rows of an (rows, n_columns) float64 work matrix that fit in ``BLOCK_BYTES``."""
    return max(1, BLOCK_BYTES // (8 * max(n_columns, 1)))


def _check_items(n_items: int) -> None:
    if n_items < 1:
        raise ValueError("resampling needs at least one item")


def count_chunks(n_items: int, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Yield float64 count matrices: ``counts[r, i]`` = times item i is drawn in resample r.

    A bootstrap resample of n items as counts is also a weight vector, so a resampled mean is
    ``counts @ values / n`` and any statistic with additive sufficient statistics (the audit's alpha) is a
    product too. Each chunk draws ``rng.integers(0, n_items, size=(rows, n_items))`` from one generator.
    """
    _check_items(n_items)
    rng = np.random.default_rng(seed)
    rows = chunk_rows(n_items)
    for start in range(0, n_resamples, rows):
        r = min(rows, n_resamples - start)
        idx = rng.integers(0, n_items, size=(r, n_items))
        idx += (np.arange(r) * n_items)[:, None]
        counts = np.bincount(idx.ravel(), minlength=r * n_items).reshape(r, n_items)
        yield counts.astype(np.float64)


def sign_chunks(n_items: int, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Yield random +-1 matrices; a row is one sign-flip relabelling of all items."""
    _check_items(n_items)
    rng = np.random.default_rng(seed)
    rows = chunk_rows(n_items)
    for start in range(0, n_resamples, rows):
        r = min(rows, n_resamples - start)
        signs = rng.integers(0, 2, size=(r, n_items)).astype(np.float64)
        signs *= 2.0
        signs -= 1.0
        yield signs


def _count_source(n_items: int, n_resamples: int, seed: int) -> Callable[[], Iterable[np.ndarray]]:
    """Count chunks to iterate once per row block: cached when small, else regenerated identically."""
    if n_items * n_resamples <= CACHE_CELLS:
        cached = list(count_chunks(n_items, n_resamples, seed))
        return lambda: cached
    return lambda: count_chunks(n_items, n_resamples, seed)


def exact_grid(values: np.ndarray) -> np.ndarray:
    """Round each row of ``values`` (k, n) to a binary grid on which every resampled sum is exact.

    BLAS sums in an order that depends on the matrix shape, the thread count and the CPU, so one vector
    would otherwise get last-bit-different intervals alone and inside a matrix. On a grid of
    ``2^-p * 2^e`` (``2^e`` above the row's largest magnitude, ``n * 2^p < 2^52``) every product and
    partial sum of ``counts @ row`` is an exactly representable float, so every order gives the same
    result. Values move by at most 2^-(p+1) of the row's scale (about 1e-14 for 226 items).
    """
    n = values.shape[1]
    if values.size == 0:
        return values.copy()
    p = 52 - n.bit_length()
    _, exponent = np.frexp(np.abs(values).max(axis=1, keepdims=True))
    step = np.ldexp(1.0, np.maximum(exponent - p, -1074))
    return np.round(values / step) * step


def resampled_means(values: np.ndarray, n_resamples: int, seed: int) -> Iterator[tuple[slice, np.ndarray]]:
    """Bootstrap means of each row of a complete (k, n_items) matrix, in blocks of rows.

    Yields ``(rows, means)`` with means of shape (block, n_resamples); rows are resampled together, each
    over all n_items items, with the draws of :func:`count_chunks`.
    """
    k, n = values.shape
    grid = exact_grid(values)
    chunks = _count_source(n, n_resamples, seed)
    block = block_rows(n_resamples)
    for r0 in range(0, k, block):
        rows = slice(r0, min(k, r0 + block))
        parts = [grid[rows] @ counts.T for counts in chunks()]
        means = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
        means /= n
        yield rows, means


def compress(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Each row's present values in item order, as a (k, m) matrix; every row must have m present."""
    k = values.shape[0]
    m = int(present[0].sum()) if k else 0
    return values[present].reshape(k, m)


def _by_size(present: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """Rows grouped by their number of present items: ``(m, row indices)``."""
    sizes = present.sum(axis=1)
    for m in np.unique(sizes):
        yield int(m), np.flatnonzero(sizes == m)


def own_means(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Mean of each row's present values (NaN if none), summed over the compressed row.

    Summing the compressed row rather than the row with zeros for missing items makes the result depend
    only on the row's own values, not on which items other rows have.
    """
    out = np.full(values.shape[0], np.nan)
    for m, rows in _by_size(present):
        if m:
            out[rows] = compress(values[rows], present[rows]).sum(axis=1) / m
    return out


def resampled_own_means(
    values: np.ndarray, present: np.ndarray, n_resamples: int, seed: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Bootstrap means of each row of ``values`` over its own present items, in item order.

    Yields ``(row indices, means (len(rows), n_resamples))``. A row's draws depend only on its number of
    present items, so rows with the same number share one draw and each gets exactly the resamples of
    its compressed vector alone. Every row needs at least one present item.
    """
    for _, rows in _by_size(present):
        for block, means in resampled_means(compress(values[rows], present[rows]), n_resamples, seed):
            yield rows[block], means


def percentile_bounds(resamples: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile-interval ends of each row of resampled statistics (linear interpolation)."""
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(resamples, [tail, 1.0 - tail], axis=1)
    return low, high
