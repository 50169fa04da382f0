"""The paper's human-human figure: interval alpha on question scores recomputed from the labels (paper rule)."""

import json
from pathlib import Path

import numpy as np
import pytest

from koblex_tasks.audit.agreement import krippendorff_alpha
from koblex_tasks.audit.legit.agreement import compare_labellers
from koblex_tasks.audit.legit.labels import LabellerSet, UnitLabels, labellers_by_group, load_labels
from koblex_tasks.audit.legit.questions import official_script_alpha, recompute_questions
from koblex_tasks.cli.audit import judge_audit_main

# The two group-2 roots LABELS.md lists as scored 5 with both labels 0.
ODD_ROOTS = [
    ["gemini-2.0-flash-001", "서울행정법원-2018구합90381", ""],
    ["gemma-3-4b-it", "전주지방법원정읍지원-2013가단5167", ""],
]


@pytest.fixture
def human_csv(legit_shared: Path) -> Path:
    return legit_shared / "human_labels.csv"


def test_paper_figure_from_the_human_labels(human_csv: Path) -> None:
    g = labellers_by_group(load_labels(human_csv))
    report = compare_labellers(g["1"], g["2"], n_boot=2000, seed=0)
    stored = next(s for s in report.scores if s.label == "question score")
    assert round(stored.alpha.value, 3) == 0.836  # the stored per-document scores
    by_rule = report.question_score_by_rule
    assert by_rule is not None and by_rule.rule == "paper" and by_rule.skipped == 0
    paper = by_rule.agreement
    assert paper.units == 44 and paper.label == "question score (paper rule)"
    # Exact Krippendorff (D_e over 2n - 1): 0.8757; the official analysis script's formula (2n): 0.8743,
    # which is the published 0.87.
    assert round(paper.alpha.value, 4) == 0.8757
    assert round(by_rule.official_script_alpha.value, 2) == 0.87
    assert paper.alpha_ci.low < paper.alpha.value < paper.alpha_ci.high and paper.alpha_ci.n_valid == 2000
    group1, group2 = by_rule.differences
    assert group1.roots == [] and sorted(group2.roots) == ODD_ROOTS
    assert group1.sub_issues > 0 and group2.sub_issues > 0  # the human files weight sub-issues 5/(N+1)


def test_official_formula_is_exact_alpha_with_2n_instead_of_2n_minus_1() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0, 10, 30), rng.uniform(0, 10, 30)
    exact = krippendorff_alpha(a, b, "interval").value
    official = official_script_alpha(a, b).value
    n = 2 * a.size
    assert (1 - official) / (1 - exact) == pytest.approx(n / (n - 1))
    assert official_script_alpha(np.ones(3), np.ones(3)).value is None


def test_recomputation_by_hand() -> None:
    """Tree "", 1, 1.1 (N = 2). a: root right, 1 covered+correct, 1.1 covered -> 5 + 2.5 + 1 = 8.5.
    b: root wrong but stored as 5 (like the odd human roots), 1 not covered, 1.1 covered+correct -> 2.5."""

    def units(labels: dict[str, tuple[int, int, float]]) -> dict:
        return {("g", "q", i): UnitLabels(*v) for i, v in labels.items()}

    a = LabellerSet("a", units({"": (1, 1, 5.0), "1": (1, 1, 2.5), "1.1": (1, 0, 1.0)}))
    b = LabellerSet(
        "b",
        units({"": (0, 0, 5.0), "1": (0, 0, 0.0), "1.1": (1, 1, 2.5)})
        | {("g", "partial", ""): UnitLabels(1, 1, 5.0)},
    )
    q = recompute_questions(a, b)
    assert q.keys == [("g", "q")] and q.a.tolist() == [8.5] and q.b.tolist() == [2.5]
    assert q.skipped == 0  # "partial" is only in b: not shared
    assert q.differences[0].roots == [] and q.differences[1].roots == [["g", "q", ""]]
    assert q.differences[1].questions == 1 and q.differences[0].questions == 0


def test_cli_prints_the_paper_figure_with_its_rule(
    human_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert judge_audit_main([str(human_csv), "--n-boot", "200"]) == 0
    out = capsys.readouterr().out
    headline = next(line for line in out.splitlines() if line.startswith("headline:"))
    assert "question-score alpha 0.876" in headline and "under the paper rule" in headline
    assert "root 5 x correct_conclusion" in headline and "formula gives 0.874" in headline
    why = next(line for line in out.splitlines() if line.startswith("why the stored-score alpha (0.836)"))
    assert "2 root(s)" in why and "서울행정법원-2018구합90381" in why
    assert "question score (stored scores)" in out and "question score (paper rule)" in out

    assert judge_audit_main([str(human_csv), "--json", "--n-boot", "0"]) == 0
    (comparison,) = json.loads(capsys.readouterr().out)["comparisons"]
    by_rule = comparison["question_score_by_rule"]
    assert by_rule["rule"] == "paper" and round(by_rule["agreement"]["alpha"]["value"], 3) == 0.876
    assert round(by_rule["official_script_alpha"]["value"], 3) == 0.874
