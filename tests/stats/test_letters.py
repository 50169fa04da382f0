"""Compact letter display: hand patterns, extremes, and the share-a-letter iff not-significant property."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from koblex_tasks import stats as st
from tests.stats.helpers import as_json


def test_compact_letters_hand_pattern() -> None:
    names = ["C", "A", "D", "B"]
    means = [0.6, 0.9, 0.5, 0.8]  # A > B > C > D
    sig = [("A", "C"), ("A", "D"), ("B", "D")]
    cld = st.compact_letters(names, means, sig)
    assert [e.name for e in cld.entries] == ["A", "B", "C", "D"]
    assert cld.letters_by_name() == {"A": "a", "B": "ab", "C": "bc", "D": "c"}
    as_json(cld)


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
    as_json(capped)


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
