"""Hand-checkable tests for the leaderboard statistics core."""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest
from scipy import stats as sps

from koblex_tasks import stats as st


def _json(result: object) -> str:
    """Outputs must serialise without NaN."""
    return json.dumps(dataclasses.asdict(result), allow_nan=False)  # type: ignore[arg-type]


def _brute_sign_flip_p(d: np.ndarray) -> float:
    """Exact two-sided sign-flip p by listing every sign pattern of the non-zero differences."""
    nz = d[d != 0]
    observed = abs(nz.sum())
    patterns = list(itertools.product((1.0, -1.0), repeat=nz.size))
    hits = sum(abs(np.dot(signs, nz)) >= observed - 1e-12 for signs in patterns)
    return hits / len(patterns)


# ---------------------------------------------------------------- bootstrap CIs


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
    for t, a in zip(together, alone, strict=True):  # same draws; BLAS may round differently
        assert (t.mean, t.low, t.high) == pytest.approx((a.mean, a.low, a.high), rel=1e-12)


def test_bootstrap_nan_mask_and_undefined_systems() -> None:
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
    # Masked reference: resample all 6 positions, average the drawn observed items.
    idx = np.random.default_rng(2).integers(0, 6, size=(3000, 6))
    valid = ~np.isnan(x[0])
    sums = np.where(valid, x[0], 0.0)[idx].sum(axis=1)
    counts = valid[idx].sum(axis=1)
    means = sums[counts > 0] / counts[counts > 0]
    assert (a.low, a.high) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])), rel=1e-12)
    assert b.mean is None and b.low is None and b.reason == "no scored items"
    assert c.mean == 0.5 and c.low is None and c.high is None and "fewer than 2" in (c.reason or "")
    _json(res)


def test_bootstrap_empty_inputs() -> None:
    one_empty = st.bootstrap_ci(np.array([]), n_resamples=10)
    assert one_empty.intervals[0].mean is None and one_empty.intervals[0].n_items == 0
    assert st.bootstrap_ci(np.empty((0, 5)), n_resamples=10).intervals == ()
    _json(one_empty)


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
    _json(res)
    with pytest.raises(ValueError, match="one label per item"):
        st.stratified_bootstrap_ci(x, hops[:-1])


# ---------------------------------------------------------------- paired tests


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
    _json(res)


def test_paired_bootstrap_identical_runs_and_undefined_cases() -> None:
    x = np.random.default_rng(2).uniform(size=50)
    same = st.paired_bootstrap(x, x, n_resamples=1000)
    assert (same.difference, same.ci_low, same.ci_high, same.p_value) == (0.0, 0.0, 0.0, 1.0)
    one = st.paired_bootstrap([0.5, np.nan], [0.2, 0.3])
    assert one.n_shared == 1 and one.difference == pytest.approx(0.3)
    assert one.ci_low is None and one.p_value is None and "fewer than 2" in (one.reason or "")
    none = st.paired_bootstrap([np.nan, 1.0], [0.0, np.nan])
    assert none.n_shared == 0 and none.difference is None and none.reason == "no shared items"
    _json(one)
    _json(none)


def test_paired_bootstrap_ci_and_p_for_a_clear_shift() -> None:
    rng = np.random.default_rng(3)
    b = rng.uniform(0.0, 0.5, size=100)
    res = st.paired_bootstrap(b + 0.3 + rng.normal(0, 0.05, 100), b, n_resamples=2000)
    assert res.ci_low is not None and res.ci_high is not None
    assert 0.25 < res.ci_low < res.difference < res.ci_high < 0.35  # type: ignore[operator]
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
    _json(same)


def test_mcnemar_exact_matches_binomtest() -> None:
    # 3 items: a wrong, b right (b01); 12 items: a right, b wrong (b10); 10 concordant.
    a = np.array([0] * 3 + [1] * 12 + [1] * 6 + [0] * 4, dtype=float)
    b = np.array([1] * 3 + [0] * 12 + [1] * 6 + [0] * 4, dtype=float)
    res = st.mcnemar(a, b)
    assert (res.b01, res.b10, res.n_shared, res.method) == (3, 12, 25, "exact")
    assert res.p_value == pytest.approx(sps.binomtest(12, 15, 0.5).pvalue)
    assert res.p_value == pytest.approx(2 * sum(sps.binom.pmf(k, 15, 0.5) for k in range(4)))
    _json(res)


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


# ---------------------------------------------------------------- multiple comparisons


def test_holm_textbook_example() -> None:
    res = st.holm_bonferroni([0.01, 0.04, 0.03, 0.005], alpha=0.05)
    # Sorted 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> monotone 0.06.
    assert res.adjusted == pytest.approx((0.03, 0.06, 0.06, 0.02))
    assert res.reject == (True, False, False, True)


def test_holm_caps_at_one_and_handles_empty() -> None:
    assert st.holm_bonferroni([0.5, 0.6]).adjusted == (1.0, 1.0)
    assert st.holm_bonferroni([]).adjusted == ()
    with pytest.raises(ValueError):
        st.holm_bonferroni([0.1, float("nan")])


def test_compact_letters_hand_pattern() -> None:
    names = ["C", "A", "D", "B"]
    means = [0.6, 0.9, 0.5, 0.8]  # A > B > C > D
    sig = [("A", "C"), ("A", "D"), ("B", "D")]
    cld = st.compact_letters(names, means, sig)
    assert [e.name for e in cld.entries] == ["A", "B", "C", "D"]
    assert cld.letters_by_name() == {"A": "a", "B": "ab", "C": "bc", "D": "c"}
    _json(cld)


def test_compact_letters_extremes() -> None:
    names, means = ["x", "y", "z"], [0.1, 0.3, 0.2]
    assert st.compact_letters(names, means, []).letters_by_name() == {"x": "a", "y": "a", "z": "a"}
    everything = list(itertools.combinations(names, 2))
    assert st.compact_letters(names, means, everything).letters_by_name() == {"y": "a", "z": "b", "x": "c"}
    low_best = st.compact_letters(names, means, everything, higher_is_better=False)
    assert low_best.entries[0].name == "x" and low_best.entries[0].letters == "a"
    assert st.compact_letters([], [], []).entries == ()


def test_compact_letters_gives_up_on_too_many_letters() -> None:
    # 4 systems where only (0,1) and (2,3) differ need 4 letters: {0,2} {0,3} {1,2} {1,3}.
    names, means = ["w", "x", "y", "z"], [0.4, 0.3, 0.2, 0.1]
    sig = [("w", "x"), ("y", "z")]
    assert len(st.compact_letters(names, means, sig).entries[0].letters) == 2
    capped = st.compact_letters(names, means, sig, max_letters=3)
    assert capped.reason is not None and all(e.letters == "" for e in capped.entries)
    _json(capped)


@pytest.mark.parametrize("seed", range(20))
def test_compact_letters_share_a_letter_iff_not_significant(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9)) if seed < 15 else 40  # 40 random systems need more than 52 letters
    names = [f"s{i}" for i in range(n)]
    means = rng.uniform(size=n)
    sig = {p for p in itertools.combinations(names, 2) if rng.uniform() < 0.5}
    cld = st.compact_letters(names, means, sig, max_letters=100_000)
    assert cld.reason is None
    groups = {e.name: set(e.groups) for e in cld.entries}
    assert cld.letters_by_name()[names[int(np.argmax(means))]].startswith("a")
    for u, v in itertools.combinations(names, 2):
        assert bool(groups[u] & groups[v]) == ((u, v) not in sig), (u, v)


# ---------------------------------------------------------------- all pairs and best set


def _three_systems() -> np.ndarray:
    rng = np.random.default_rng(10)
    base = rng.uniform(0.3, 0.7, size=60)
    return np.stack([base + 0.2, base + 0.2 + rng.normal(0, 0.02, 60), base - 0.2])


def test_all_pairs_continuous_matches_single_pair_functions() -> None:
    x = _three_systems()
    x[1, [3, 7]] = np.nan
    res = st.all_pairs(x, ["a", "b", "c"], n_resamples=500, n_permutations=999, seed=5)
    assert [(c.system_a, c.system_b) for c in res.comparisons] == [("a", "b"), ("a", "c"), ("b", "c")]
    for comp in res.comparisons:
        i, j = "abc".index(comp.system_a), "abc".index(comp.system_b)
        boot = st.paired_bootstrap(x[i], x[j], n_resamples=500, seed=5)
        perm = st.paired_permutation_test(x[i], x[j], n_permutations=999, seed=5)
        assert comp.n_shared == boot.n_shared
        assert comp.difference == pytest.approx(boot.difference)
        assert (comp.ci_low, comp.ci_high, comp.bootstrap_p) == pytest.approx(
            (boot.ci_low, boot.ci_high, boot.p_value)
        )
        assert comp.p_value == pytest.approx(perm.p_value)
        assert comp.test == "sign-flip-monte-carlo"
    holm = st.holm_bonferroni([c.p_value for c in res.comparisons])  # type: ignore[misc]
    assert tuple(c.p_adjusted for c in res.comparisons) == holm.adjusted
    sig = {(c.system_a, c.system_b) for c in res.comparisons if c.significant}
    assert sig == {("a", "c"), ("b", "c")}
    assert res.letters.letters_by_name() == {"a": "a", "b": "a", "c": "b"}
    _json(res)


def test_all_pairs_per_system_shortcut_keeps_ties_on_discrete_scores() -> None:
    # Complete systems use per-system statistics; on 0/0.5/1 scores |stat| ties the observed value
    # often, and rounding must not change which ties count.
    rng = np.random.default_rng(12)
    x = rng.choice([0.0, 0.5, 1.0], size=(4, 40))
    names = ["a", "b", "c", "d"]
    res = st.all_pairs(x, names, n_resamples=400, n_permutations=999, seed=2)
    for comp in res.comparisons:
        i, j = names.index(comp.system_a), names.index(comp.system_b)
        perm = st.paired_permutation_test(x[i], x[j], n_permutations=999, seed=2)
        boot = st.paired_bootstrap(x[i], x[j], n_resamples=400, seed=2)
        assert comp.p_value == perm.p_value
        assert comp.bootstrap_p == boot.p_value
        assert (comp.ci_low, comp.ci_high) == pytest.approx((boot.ci_low, boot.ci_high), abs=1e-12)


def test_all_pairs_default_permutations_can_reach_holm_significance() -> None:
    assert st.family_permutations(1225, 0.05) == 49_000
    assert st.family_permutations(3, 0.05) == 10_000
    # Never fewer flips than resamples; more when the family needs them (3 pairs -> 120).
    assert st.all_pairs(_three_systems(), ["a", "b", "c"], n_resamples=200).n_permutations == 200
    assert st.all_pairs(_three_systems(), ["a", "b", "c"], n_resamples=50).n_permutations == 120


def test_all_pairs_binary_uses_mcnemar() -> None:
    rng = np.random.default_rng(8)
    good = (rng.uniform(size=200) < 0.8).astype(float)
    bad = (rng.uniform(size=200) < 0.3).astype(float)
    res = st.all_pairs(np.stack([good, bad]), ["good", "bad"], metric_kind="binary", n_resamples=300)
    (comp,) = res.comparisons
    ref = st.mcnemar(good, bad)
    assert comp.test == "mcnemar-chi2-cc" and comp.p_value == pytest.approx(ref.p_value)
    assert (comp.b01, comp.b10) == (ref.b01, ref.b10) and comp.significant
    with pytest.raises(ValueError, match="binary"):
        st.all_pairs(np.array([[0.5, 1.0], [0.0, 1.0]]), ["a", "b"], metric_kind="binary")


def test_all_pairs_edge_cases() -> None:
    x = np.random.default_rng(9).uniform(size=30)
    identical = st.all_pairs(np.stack([x, x]), ["a", "b"], n_resamples=200)
    (comp,) = identical.comparisons
    assert comp.p_value == 1.0 and comp.bootstrap_p == 1.0 and not comp.significant
    assert comp.test == "sign-flip-exact"
    single = st.all_pairs(x[None, :], ["only"], n_resamples=200)
    assert single.comparisons == () and single.letters.letters_by_name() == {"only": "a"}
    empty = st.all_pairs(np.empty((0, 0)), [], n_resamples=200)
    assert empty.comparisons == () and empty.systems == () and empty.letters.entries == ()
    disjoint = st.all_pairs(np.array([[0.1, np.nan, 0.3], [np.nan, 0.2, np.nan]]), ["a", "b"])
    (comp,) = disjoint.comparisons
    assert comp.p_value is None and comp.p_adjusted is None and comp.reason == "no shared items"
    for result in (identical, single, empty, disjoint):
        _json(result)


def test_indistinguishable_from_best() -> None:
    x = _three_systems()
    res = st.indistinguishable_from_best(x, ["a", "b", "c"], n_resamples=300)
    assert res.best in {"a", "b"} and set(res.members) == {"a", "b"}
    assert [c.system_a for c in res.comparisons] == [res.best] * 2
    worst_first = st.indistinguishable_from_best(x, ["a", "b", "c"], n_resamples=300, higher_is_better=False)
    assert worst_first.best == "c" and worst_first.members == ("c",)
    assert st.indistinguishable_from_best(np.empty((0, 0)), []).best is None
    alone = st.indistinguishable_from_best(x[:1], ["a"])
    assert alone.members == ("a",) and alone.comparisons == ()
    _json(res)


def test_all_pairs_is_deterministic() -> None:
    x = _three_systems()
    kwargs = {"n_resamples": 300, "n_permutations": 300, "seed": 1}
    assert st.all_pairs(x, ["a", "b", "c"], **kwargs) == st.all_pairs(x, ["a", "b", "c"], **kwargs)
