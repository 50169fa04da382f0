"""System and stratum intervals: hand-checkable cases, and the same interval on every path."""

from __future__ import annotations

import numpy as np
import pytest

from koblex_tasks import stats as st
from tests.stats.helpers import as_json


def test_constant_vector_interval_is_a_point() -> None:
    res = st.bootstrap_ci(np.full(226, 0.7), n_resamples=2000)
    ci = res.intervals[0]
    assert ci.mean == ci.low == ci.high == 0.7
    assert ci.n_items == 226 and ci.reason is None


def test_bootstrap_matches_naive_resampling_with_same_draws() -> None:
    rng = np.random.default_rng(5)
    x = rng.uniform(size=(3, 20))
    res = st.bootstrap_ci(x, n_resamples=2000, confidence=0.9, seed=11)
    idx = np.random.default_rng(11).integers(0, 20, size=(2000, 20))  # one chunk at this size
    for s in range(3):
        means = x[s, idx].mean(axis=1)
        lo, hi = np.quantile(means, [0.05, 0.95])
        ci = res.intervals[s]
        assert ci.mean == pytest.approx(x[s].mean())
        assert (ci.low, ci.high) == pytest.approx((lo, hi), rel=1e-12)


def test_item_resamples_are_shared_across_systems() -> None:
    x = np.random.default_rng(1).uniform(size=(4, 30))
    together = st.bootstrap_ci(x, n_resamples=500, seed=3).intervals
    alone = [st.bootstrap_ci(row, n_resamples=500, seed=3).intervals[0] for row in x]
    for t, a in zip(together, alone, strict=True):
        assert (t.mean, t.low, t.high) == pytest.approx((a.mean, a.low, a.high), rel=1e-12)
        assert (t.mean, t.low, t.high) == (a.mean, a.low, a.high)  # sums on the exact grid: bit-identical


def test_bootstrap_nan_systems_resample_their_own_items() -> None:
    x = np.array(
        [
            [0.2, np.nan, 0.6, 1.0, np.nan, 0.4],
            [np.nan] * 6,
            [np.nan, 0.5, np.nan, np.nan, np.nan, np.nan],
        ]
    )
    res = st.bootstrap_ci(x, n_resamples=3000, seed=2, names=["a", "b", "c"])
    a, b, c = res.intervals
    assert a.mean == pytest.approx(0.55) and a.n_items == 4
    # Reference: resample system a's 4 scored items, in item order, as if they were the whole vector.
    own = x[0, ~np.isnan(x[0])]
    idx = np.random.default_rng(2).integers(0, 4, size=(3000, 4))
    means = own[idx].mean(axis=1)
    assert (a.low, a.high) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])), rel=1e-12)
    assert b.mean is None and b.low is None and b.reason == "no scored items"
    assert c.mean == 0.5 and c.low is None and c.high is None and "fewer than 2" in (c.reason or "")
    as_json(res)


def test_log_metric_and_board_give_the_same_interval() -> None:
    # The log metric sees one run's scored samples in sample-id order; the board sees runs x all item ids
    # with NaN for unscored. Same scores, resamples and seed must give the identical interval.
    rng = np.random.default_rng(8)
    board = rng.uniform(size=(6, 80))
    board[0, [3, 17, 40]] = np.nan
    board[1, [5, 6, 7]] = np.nan  # same number of scored items as run 0, other items: shares its draw
    board[2, rng.uniform(size=80) < 0.3] = np.nan
    board[3, :] = np.nan
    board[3, 10] = 0.4
    intervals = st.bootstrap_ci(board, n_resamples=2000, seed=0).intervals
    for run, ci in enumerate(intervals):
        log_values = board[run, ~np.isnan(board[run])]
        assert st.mean_interval(log_values, 2000, 0.95, 0) == (ci.low, ci.high)
        assert st.mean_interval(board[run], 2000, 0.95, 0) == (ci.low, ci.high)  # NaNs left out
        alone = st.bootstrap_ci(log_values, n_resamples=2000, seed=0).intervals[0]
        assert (alone.mean, alone.low, alone.high, alone.n_items) == (ci.mean, ci.low, ci.high, ci.n_items)
    assert st.mean_interval([np.nan, np.nan]) == (None, None)


def test_complete_rows_keep_their_draw_when_other_rows_have_gaps() -> None:
    x = np.random.default_rng(3).uniform(size=(3, 25))
    holey = x.copy()
    holey[2, :5] = np.nan
    assert st.bootstrap_ci(x, 400, seed=1).intervals[:2] == st.bootstrap_ci(holey, 400, seed=1).intervals[:2]


def test_bootstrap_empty_inputs() -> None:
    one_empty = st.bootstrap_ci(np.array([]), n_resamples=10)
    assert one_empty.intervals[0].mean is None and one_empty.intervals[0].n_items == 0
    assert st.bootstrap_ci(np.empty((0, 5)), n_resamples=10).intervals == ()
    as_json(one_empty)


def test_bootstrap_is_deterministic_under_a_seed() -> None:
    x = np.random.default_rng(0).uniform(size=(5, 40))
    assert st.bootstrap_ci(x, n_resamples=400, seed=7) == st.bootstrap_ci(x, n_resamples=400, seed=7)
    assert st.bootstrap_ci(x, n_resamples=400, seed=7) != st.bootstrap_ci(x, n_resamples=400, seed=8)


def test_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="infinities"):
        st.bootstrap_ci([0.1, np.inf])
    with pytest.raises(ValueError, match="names"):
        st.bootstrap_ci(np.zeros((2, 3)), names=["only-one"])
    with pytest.raises(ValueError, match="confidence"):
        st.bootstrap_ci([0.1, 0.2], confidence=1.0)


def test_stratified_equals_bootstrap_on_each_stratum() -> None:
    rng = np.random.default_rng(4)
    x = rng.uniform(size=(2, 12))
    hops = np.array([1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 2])
    res = st.stratified_bootstrap_ci(x, hops, n_resamples=300, seed=9, names=["p", "q"])
    assert [s.stratum for s in res.strata] == [1, 2, 3]
    assert all(type(s.stratum) is int for s in res.strata)  # plain Python for JSON
    assert [s.n_items for s in res.strata] == [4, 5, 3]
    for s in res.strata:
        expected = st.bootstrap_ci(x[:, hops == s.stratum], n_resamples=300, seed=9, names=["p", "q"])
        assert s.intervals == expected.intervals
    as_json(res)
    with pytest.raises(ValueError, match="one label per item"):
        st.stratified_bootstrap_ci(x, hops[:-1])
