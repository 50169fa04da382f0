"""Holm's adjustment and the sign flips a family of tests needs."""

from __future__ import annotations

import pytest

from koblex_tasks import stats as st


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


def test_family_permutations_lift_the_monte_carlo_floor_above_holm() -> None:
    assert st.family_permutations(1225, 0.05) == 49_000
    assert st.family_permutations(3, 0.05) == 10_000
