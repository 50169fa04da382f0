"""The paired verdict of a run against the released run: the engine's tests, Holm over the whole report."""

from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.grid.compare import Settings, holm, paired_test, verdict

F1 = KOBLEX.value("provision_f1")
EM = KOBLEX.value("provision_em")
SETTINGS = Settings(n_resamples=2000, seed=0, alpha=0.05)


def scores(values: list[float], start: int = 0) -> dict[str, float]:
    return {f"q{start + k:03d}": v for k, v in enumerate(values)}


def test_same_scores_are_consistent_and_a_large_shift_differs() -> None:
    released = scores([0.2, 0.4, 0.6, 0.8] * 10)
    same = paired_test(dict(released), released, F1, SETTINGS, 2000)
    shifted = paired_test({k: min(1.0, v + 0.2) for k, v in released.items()}, released, F1, SETTINGS, 2000)
    tests = holm([same, shifted], SETTINGS.alpha)
    assert verdict([tests[0]]) == "reproduction consistent (n=40)"
    assert tests[1].comparison.significant and verdict([tests[1]]).startswith("differs: Provision F1 +")
    assert tests[1].comparison.p_adjusted is not None and tests[1].comparison.p_value is not None
    assert tests[1].comparison.p_adjusted >= tests[1].comparison.p_value  # adjusted over the family of two


def test_holm_over_the_report_can_undo_a_lone_significance() -> None:
    released = scores([0.0, 1.0] * 10)
    mine = dict(released)
    for k in list(mine)[:7]:  # 7 of 20 items flipped from 0 to 1 (or kept at 1)
        mine[k] = 1.0
    alone = holm([paired_test(mine, released, EM, SETTINGS, 2000)], SETTINGS.alpha)[0]
    many = holm([paired_test(mine, released, EM, SETTINGS, 2000)] * 12, SETTINGS.alpha)[0]
    assert alone.comparison.test.startswith("mcnemar")
    assert alone.comparison.p_adjusted is not None and many.comparison.p_adjusted is not None
    assert many.comparison.p_adjusted > alone.comparison.p_adjusted


def test_pairs_only_shared_items() -> None:
    released = scores([0.5] * 30)
    mine = scores([0.5] * 5)  # a --limit 5 run: compared on its 5 items
    result = paired_test(mine, released, F1, SETTINGS, 2000)
    assert result.comparison.n_shared == 5
    untested = paired_test(scores([0.5] * 5, start=100), released, F1, SETTINGS, 2000)
    assert verdict(holm([untested], 0.05)) == "not tested: no shared items"
