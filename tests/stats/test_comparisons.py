"""All pairs of a score matrix and the set indistinguishable from the best."""

from __future__ import annotations

import numpy as np
import pytest

from koblex_tasks import stats as st
from tests.stats.helpers import as_json


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
    holm = st.holm_bonferroni([c.p_value for c in res.comparisons])
    assert tuple(c.p_adjusted for c in res.comparisons) == holm.adjusted
    sig = {(c.system_a, c.system_b) for c in res.comparisons if c.significant}
    assert sig == {("a", "c"), ("b", "c")}
    assert res.letters.letters_by_name() == {"a": "a", "b": "a", "c": "b"}
    as_json(res)


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
        as_json(result)


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
    as_json(res)


def test_all_pairs_is_deterministic() -> None:
    x = _three_systems()
    kwargs = {"n_resamples": 300, "n_permutations": 300, "seed": 1}
    assert st.all_pairs(x, ["a", "b", "c"], **kwargs) == st.all_pairs(x, ["a", "b", "c"], **kwargs)


def test_all_pairs_systems_are_the_bootstrap_intervals() -> None:
    x = _three_systems()
    x[2, [1, 4]] = np.nan
    names = ["a", "b", "c"]
    res = st.all_pairs(x, names, n_resamples=400, seed=3)
    assert res.systems == st.bootstrap_ci(x, 400, seed=3, names=names).intervals


def test_all_pairs_pairs_with_the_same_gaps_match_single_pair_functions() -> None:
    # a and b miss the same items, so their pair goes through per-system statistics; c is complete.
    x = _three_systems()
    x[:2, [3, 7, 11]] = np.nan
    res = st.all_pairs(x, ["a", "b", "c"], n_resamples=500, n_permutations=999, seed=5)
    for comp in res.comparisons:
        i, j = "abc".index(comp.system_a), "abc".index(comp.system_b)
        boot = st.paired_bootstrap(x[i], x[j], n_resamples=500, seed=5)
        perm = st.paired_permutation_test(x[i], x[j], n_permutations=999, seed=5)
        assert comp.n_shared == boot.n_shared == 57
        assert (comp.mean_a, comp.mean_b, comp.difference) == (boot.mean_a, boot.mean_b, boot.difference)
        assert (comp.ci_low, comp.ci_high, comp.bootstrap_p) == pytest.approx(
            (boot.ci_low, boot.ci_high, boot.p_value), abs=1e-12
        )
        assert comp.p_value == perm.p_value
