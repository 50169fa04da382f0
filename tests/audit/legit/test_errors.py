"""Error attribution (Fig. 7): a hand-made tree where every cell is known, and the shared released verdicts."""

from pathlib import Path

import pytest

from koblex_tasks.audit.legit.errors import CATEGORIES, TreeVerdicts, attribute, classify, trees_from_log
from koblex_tasks.scorers.legit.arithmetic import Verdict

T, F = True, False

# root: children 1 (right), 2 (covered, wrong), 3 (missing), 4 (right), 5 -> "both"
# 1: both children right -> all_correct;  2: its child covered but wrong -> deduction
# 3: a child missing -> decomposition (3 itself correct but not covered);  4.1: 4.1.1 wrong, 4.1.2 missing -> both
# 4: its child 4.1 right -> all_correct (4 itself wrong);  5: its child has no verdict -> left out
HAND = {
    "": (T, T),
    "1": (T, T), "1.1": (T, T), "1.2": (T, T),
    "2": (T, F), "2.1": (T, F),
    "3": (F, T), "3.1": (F, F), "3.2": (T, T),
    "4": (T, F), "4.1": (T, T), "4.1.1": (T, F), "4.1.2": (F, F),
    "5": (T, T), "5.1": None,
}  # fmt: skip


def hand_tree() -> TreeVerdicts:
    labels = {k: (Verdict(*v) if v else None) for k, v in HAND.items()}
    return TreeVerdicts("hand", "hard", tuple(HAND), labels)


def cells(table, group: str) -> dict[str, tuple[int, int, int]]:
    return {c: (cell.n, cell.correct, cell.covered_correct) for c, cell in table.groups[group].items()}


def test_hand_made_tree_every_cell() -> None:
    cases, skipped = classify(hand_tree())
    assert skipped == 1
    assert {c.parent: c.category for c in cases} == {
        "": "both", "1": "all_correct", "2": "deduction", "3": "decomposition", "4": "all_correct", "4.1": "both"
    }  # fmt: skip
    table = attribute([hand_tree()])
    assert (table.answers, table.parents, table.skipped) == (1, 6, 1)
    assert list(table.groups) == ["all", "depth 0", "depth 1", "depth 2", "hard"]
    zero = (0, 0, 0)
    assert cells(table, "depth 0") == {
        "all_correct": zero,
        "deduction": zero,
        "decomposition": zero,
        "both": (1, 1, 1),
    }
    assert cells(table, "depth 1") == {
        "all_correct": (2, 1, 1), "deduction": (1, 0, 0), "decomposition": (1, 1, 0), "both": zero
    }  # fmt: skip
    assert cells(table, "depth 2") == {
        "all_correct": zero,
        "deduction": zero,
        "decomposition": zero,
        "both": (1, 1, 1),
    }
    assert cells(table, "all") == cells(table, "hard") == {
        "all_correct": (2, 1, 1), "deduction": (1, 0, 0), "decomposition": (1, 1, 0), "both": (2, 2, 2)
    }  # fmt: skip
    assert table.groups["all"]["all_correct"].correct_rate == 0.5
    assert table.groups["all"]["decomposition"].covered_correct_rate == 0.0
    assert table.to_dict()["categories"] == list(CATEGORIES)


@pytest.fixture(scope="module")
def replayed_log(legit_shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The six shared released verdict rows replayed into an ordinary LEGIT log with `koblex replay --verdicts`."""
    from koblex_tasks.cli.main import main

    out = tmp_path_factory.mktemp("replayed")
    verdicts = (
        legit_shared / "released_verdicts" / "reasoning_tasks_gpt-4.1_evaluator_gemini-2.0-flash-001.jsonl"
    )
    data = legit_shared / "legit_test_sample.jsonl"
    assert main(["replay", "--verdicts", str(verdicts), "--data", str(data), "--log-dir", str(out)]) == 0
    [log] = sorted(out.glob("*.eval"))
    return log


def test_shared_released_verdicts_match_the_hand_count(replayed_log: Path) -> None:
    # Hand count from the six rows (README of released_verdicts): roots have child "1" (or "1" and "2"),
    # "1" has children "1.1" (and "1.2"). Row 3's root sees "1" and "2" covered but wrong (deduction) and is
    # right; its "1" has a right child but is itself wrong. Rows 1, 4, 5 miss "1.2" (decomposition).
    table = attribute(trees_from_log(replayed_log))
    assert (table.answers, table.parents, table.skipped) == (6, 12, 0)
    zero = (0, 0, 0)
    assert cells(table, "depth 0") == {
        "all_correct": (5, 5, 5), "deduction": (1, 1, 1), "decomposition": zero, "both": zero
    }  # fmt: skip
    assert cells(table, "depth 1") == {
        "all_correct": (3, 2, 2), "deduction": zero, "decomposition": (3, 3, 3), "both": zero
    }  # fmt: skip
    assert cells(table, "all") == cells(table, "easy") == {
        "all_correct": (8, 7, 7), "deduction": (1, 1, 1), "decomposition": (3, 3, 3), "both": zero
    }  # fmt: skip
