"""The one resampling source: its draws are fixed by (items, resamples, seed) and its sums are exact."""

from __future__ import annotations

import numpy as np
import pytest

from koblex_tasks.stats import resampling as rs


def test_count_chunks_are_bincounts_of_one_integer_draw() -> None:
    # Below CHUNK_CELLS // n_items resamples there is one chunk: exactly the audit's former single draw.
    (counts,) = rs.count_chunks(299, 2000, 0)
    idx = np.random.default_rng(0).integers(0, 299, size=(2000, 299))
    expected = np.stack([np.bincount(row, minlength=299) for row in idx]).astype(float)
    assert np.array_equal(counts, expected)
    assert (counts.sum(axis=1) == 299).all()


def test_chunk_size_depends_only_on_items() -> None:
    n = 1000
    rows = rs.chunk_rows(n)
    chunks = list(rs.count_chunks(n, rows + 5, seed=3))
    assert [c.shape[0] for c in chunks] == [rows, 5]
    assert np.array_equal(chunks[0], next(rs.count_chunks(n, rows, seed=3)))
    with pytest.raises(ValueError, match="at least one item"):
        next(rs.count_chunks(0, 10, 0))


def test_sign_chunks_reproduce_the_integer_draw() -> None:
    (signs,) = rs.sign_chunks(21, 999, 4)
    expected = np.random.default_rng(4).integers(0, 2, size=(999, 21)) * 2.0 - 1.0
    assert np.array_equal(signs, expected)


def test_exact_grid_makes_resampled_sums_independent_of_the_batch() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(50, 226)) * rng.choice([1e-3, 1.0, 1e4], size=(50, 1))
    grid = rs.exact_grid(x)
    assert np.abs(grid - x).max() <= 2.0**-44 * np.abs(x).max()
    (counts,) = rs.count_chunks(226, 3000, 1)
    together = grid @ counts.T
    for s in (0, 7, 49):
        assert np.array_equal(together[s], (grid[s : s + 1] @ counts.T)[0])
        assert np.array_equal(together[s], counts @ grid[s])
    assert np.array_equal(rs.exact_grid(np.zeros((2, 3))), np.zeros((2, 3)))


def test_resampled_own_means_equal_the_compressed_row_alone() -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(size=(6, 40))
    present = rng.uniform(size=x.shape) > 0.1
    present[1] = present[4] = present[0]  # same pattern
    present[2, :] = True
    got = {
        int(r): m
        for rows, means in rs.resampled_own_means(x, present, 500, 9)
        for r, m in zip(rows, means, strict=True)
    }
    assert sorted(got) == list(range(6))
    for s in range(6):
        own = x[s, present[s]][None, :]
        ((_, alone),) = rs.resampled_means(own, 500, 9)
        assert np.array_equal(got[s], alone[0])
    means = rs.own_means(np.where(present, x, 0.0), present)
    assert means[2] == x[2].sum() / 40


def test_percentile_bounds_interpolate_linearly() -> None:
    low, high = rs.percentile_bounds(np.arange(101.0)[None, :], 0.9)
    assert (low[0], high[0]) == pytest.approx((5.0, 95.0))
