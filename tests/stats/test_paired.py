"""Paired tests of two runs on their shared items: bootstrap of the difference, sign flips, McNemar."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from koblex_tasks import stats as st
from tests.stats.helpers import as_json


def _brute_sign_flip_p(d: np.ndarray) -> float:
    """Exact two-sided sign-flip p by listing every sign pattern of the non-zero differences."""
    nz = d[d != 0]
    observed = abs(nz.sum())
    patterns = list(itertools.product((1.0, -1.0), repeat=nz.size))
    hits = sum(abs(np.dot(signs, nz)) >= observed - 1e-12 for signs in patterns)
    return hits / len(patterns)


def test_paired_bootstrap_uses_only_shared_items() -> None:
    a = np.array([1.0, 0.5, np.nan, 0.25, 0.0, 0.75])
    b = np.array([0.5, np.nan, 0.3, 0.25, 0.5, 0.25])
    res = st.paired_bootstrap(a, b, n_resamples=2000, seed=1)
    shared = [0, 3, 4, 5]
    assert res.n_shared == 4
    assert res.mean_a == pytest.approx(a[shared].mean())
    assert res.mean_b == pytest.approx(b[shared].mean())
    assert res.difference == pytest.approx((a[shared] - b[shared]).mean())
    # Values at positions the other run lacks must not matter.
    a2, b2 = a.copy(), b.copy()
    a2[1], b2[2] = 0.0, 1.0
    assert st.paired_bootstrap(a2, b2, n_resamples=2000, seed=1) == res
    assert st.paired_permutation_test(a2, b2, seed=1) == st.paired_permutation_test(a, b, seed=1)
    as_json(res)


def test_paired_bootstrap_identical_runs_and_undefined_cases() -> None:
    x = np.random.default_rng(2).uniform(size=50)
    same = st.paired_bootstrap(x, x, n_resamples=1000)
    assert (same.difference, same.ci_low, same.ci_high, same.p_value) == (0.0, 0.0, 0.0, 1.0)
    one = st.paired_bootstrap([0.5, np.nan], [0.2, 0.3])
    assert one.n_shared == 1 and one.difference == pytest.approx(0.3)
    assert one.ci_low is None and one.p_value is None and "fewer than 2" in (one.reason or "")
    none = st.paired_bootstrap([np.nan, 1.0], [0.0, np.nan])
    assert none.n_shared == 0 and none.difference is None and none.reason == "no shared items"
    as_json(one)
    as_json(none)


def test_paired_bootstrap_ci_and_p_for_a_clear_shift() -> None:
    rng = np.random.default_rng(3)
    b = rng.uniform(0.0, 0.5, size=100)
    res = st.paired_bootstrap(b + 0.3 + rng.normal(0, 0.05, 100), b, n_resamples=2000)
    assert res.ci_low is not None and res.ci_high is not None
    assert 0.25 < res.ci_low < res.difference < res.ci_high < 0.35
    assert res.p_value == pytest.approx(1 / 2001)


@pytest.mark.parametrize(
    "d",
    [
        [0.5, -0.25, 1.0, 0.0, 0.75],
        [1.0, 1.0, -1.0, 1.0, 0.0, -1.0, 1.0],  # many ties of |sum|
        [0.1, 0.2, 0.3, -0.05, 0.4, 0.15, -0.3, 0.2, 0.25, 0.1, 0.05, 0.3],
    ],
)
def test_permutation_exact_matches_enumeration(d: list[float]) -> None:
    diff = np.array(d)
    b = np.full(diff.size, 0.2)
    res = st.paired_permutation_test(b + diff, b, seed=0)
    assert res.method == "exact"
    assert res.n_nonzero == int((diff != 0).sum())
    assert res.n_permutations == 2**res.n_nonzero
    assert res.p_value == pytest.approx(_brute_sign_flip_p((b + diff) - b))


def test_permutation_exact_by_hand() -> None:
    # d = (1, 2, 3): |sum| = 6 is reached only by all + and all -, so p = 2/8.
    res = st.paired_permutation_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])
    assert res.p_value == 0.25 and res.difference == 2.0


def test_permutation_switches_to_monte_carlo_above_twenty_nonzero() -> None:
    rng = np.random.default_rng(6)
    b = rng.uniform(size=21)
    a20 = b.copy()
    a20[:20] += rng.normal(0, 0.1, 20)
    assert st.paired_permutation_test(a20, b).method == "exact"
    a21 = b + rng.normal(0, 0.1, 21)
    res = st.paired_permutation_test(a21, b, n_permutations=999, seed=4)
    assert res.method == "monte-carlo" and res.n_permutations == 999
    # Reproduce the Monte Carlo p: same sign draws, +1 correction.
    d = a21 - b
    signs = np.random.default_rng(4).integers(0, 2, size=(999, 21)) * 2.0 - 1.0
    count = (np.abs(signs @ d) >= abs(d.sum()) - 1e-12).sum()
    assert res.p_value == pytest.approx((count + 1) / 1000)


def test_permutation_identical_runs_and_strong_effect() -> None:
    x = np.random.default_rng(7).uniform(size=40)
    same = st.paired_permutation_test(x, x)
    assert same.p_value == 1.0 and same.n_nonzero == 0 and same.difference == 0.0
    strong = st.paired_permutation_test(x + 0.5, x, n_permutations=999)
    assert strong.p_value == pytest.approx(1 / 1000)  # the +1 correction: never 0
    assert st.paired_permutation_test([0.1], [0.2]).p_value is None
    as_json(same)


def test_mcnemar_exact_matches_binomtest() -> None:
    # 3 items: a wrong, b right (b01); 12 items: a right, b wrong (b10); 10 concordant.
    a = np.array([0] * 3 + [1] * 12 + [1] * 6 + [0] * 4, dtype=float)
    b = np.array([1] * 3 + [0] * 12 + [1] * 6 + [0] * 4, dtype=float)
    res = st.mcnemar(a, b)
    assert (res.b01, res.b10, res.n_shared, res.method) == (3, 12, 25, "exact")
    assert res.p_value == pytest.approx(sps.binomtest(12, 15, 0.5).pvalue)
    assert res.p_value == pytest.approx(2 * sum(sps.binom.pmf(k, 15, 0.5) for k in range(4)))
    as_json(res)


def test_mcnemar_chi_square_with_continuity_correction() -> None:
    a = np.array([0] * 10 + [1] * 25 + [1] * 5, dtype=float)
    b = np.array([1] * 10 + [0] * 25 + [1] * 5, dtype=float)
    res = st.mcnemar(a, b)
    assert res.method == "chi2-cc" and (res.b01, res.b10) == (10, 25)
    assert res.statistic == pytest.approx((25 - 10 - 1) ** 2 / 35)  # 5.6
    assert res.p_value == pytest.approx(sps.chi2.sf(5.6, 1))


def test_mcnemar_edge_cases() -> None:
    same = st.mcnemar([1, 0, 1, np.nan], [1, 0, 1, 0])
    assert same.p_value == 1.0 and same.n_shared == 3 and same.b01 == same.b10 == 0
    assert st.mcnemar([1, np.nan], [0, 1]).p_value is None
    with pytest.raises(ValueError, match="binary"):
        st.mcnemar([0.5, 1.0], [0.0, 1.0])


def test_paired_ci_is_the_interval_of_the_shared_differences() -> None:
    rng = np.random.default_rng(11)
    a, b = rng.uniform(size=60), rng.uniform(size=60)
    a[[2, 9]] = np.nan
    b[[9, 30, 31]] = np.nan
    res = st.paired_bootstrap(a, b, n_resamples=1500, seed=4)
    shared = ~np.isnan(a) & ~np.isnan(b)
    ci = st.bootstrap_ci(a[shared] - b[shared], n_resamples=1500, seed=4).intervals[0]
    assert res.n_shared == ci.n_items == 56
    assert (res.ci_low, res.ci_high) == (ci.low, ci.high)
    # Items only one run (or neither) scored change nothing the bootstrap reports.
    padded = st.paired_bootstrap(np.r_[a, np.nan, 0.3], np.r_[b, 0.1, np.nan], n_resamples=1500, seed=4)
    assert padded == res


def test_one_test_result_type_for_both_tests() -> None:
    flip = st.paired_permutation_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])
    assert (flip.test, flip.statistic, flip.b01) == ("sign-flip", 6.0, None)
    exact = st.mcnemar([1, 1, 1, 0, 1], [0, 0, 1, 0, 1])
    assert (exact.test, exact.n_nonzero, exact.n_permutations) == ("mcnemar", 2, 0)
    assert exact.difference == pytest.approx(0.4)  # mean(a - b) on shared items = (b10 - b01) / n
    assert type(flip) is type(exact) is st.PairedTest
