"""The LEGIT rubric's arithmetic: from per-issue verdicts to the 0-10 score, under each rule. Pure: no judge.

Per node the judge says `contains_issue` (the answer addresses it) and `correct_conclusion`. With N the
number of non-root nodes *of the tree*:

* `rule="paper"` (the paper's formula; `reasoning_task_evaluate_legit.py` at commit 9e62d56): final order 5 if
  the root's `correct_conclusion`; each covered non-root node adds 2/N (coverage) and, when its conclusion is
  also correct, 3/N more (correctness).
* `rule="official"` (`reasoning_task_evaluate.py` at 140f927, `reasoning_task_evaluate_legit.py` at c79355a:
  the scripts whose outputs were released as `results/*_evaluator_*.jsonl`): a node with a covered-but-wrong
  *descendant* scores 0, and the root scores 5 only if it is covered, correct and no node below it is covered
  but wrong. Descendancy is real tree ancestry ("1" is not an ancestor of "10").

A node without a verdict (the judge's reply stayed unparsable) leaves the total *unscored* (NaN), never
rescaled: N stays the tree's.

`official_script=True` reproduces the released scripts' arithmetic exactly, bugs included, for either rule:
descendancy is the scripts' string test `other.startswith(issue_id)` (so "10" and "11.2" count as sub-issues
of "1"), a node without a verdict is dropped and N becomes the number of judged nodes minus one (the scripts
skip an issue whose reply does not parse and divide by `len(issue_results) - 1`), and the total is the sum of
the per-node scores in the order the nodes were judged (the verdict dict's order), which is how the released
`score` fields were computed (so they are reproduced to the last bit).

In every case the total is the in-order sum of the per-node scores, as both official scripts compute it; the
three components are summed separately.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from koblex_tasks.benchmarks.legit.issues import ROOT_ID, is_ancestor
from koblex_tasks.benchmarks.legit.spec import CORRECTNESS_POINTS, COVERAGE_POINTS, FINAL_ORDER_POINTS

RULES: tuple[str, ...] = ("paper", "official")
# One line per rule, for reports that must say which rule produced a figure.
RULE_SUMMARY: dict[str, str] = {
    "paper": "root 5 x correct_conclusion; each sub-issue 2/N if covered, +3/N if also correct; "
    "N = the tree's sub-issues",
    "official": "as paper, but a node with a covered-but-wrong descendant scores 0 and the root needs "
    "contains_issue and no covered-but-wrong node",
}

Parts = tuple[float, float, float]  # (final order, coverage, correctness) points of one node


@dataclass(frozen=True)
class Verdict:
    contains_issue: bool
    correct_conclusion: bool
    rationale: str | None = None

    @property
    def covered_but_wrong(self) -> bool:
        return self.contains_issue and not self.correct_conclusion


def label_record(verdict: Verdict | None, score: float | None) -> dict[str, Any]:
    """A node's labels and points as score metadata records them (what `rederive` and the audit read back)."""
    return {
        "contains_issue": verdict.contains_issue if verdict else None,
        "correct_conclusion": verdict.correct_conclusion if verdict else None,
        "rationale": verdict.rationale if verdict else None,
        "score": score,
        "parsed": verdict is not None,
    }


@dataclass(frozen=True)
class RubricResult:
    """Score components of one answer; NaN components when the total cannot be determined."""

    legit_score: float
    final_order: float
    coverage: float
    correctness: float
    issue_scores: dict[str, float | None]  # per node; None when it cannot be determined (or was dropped)
    n: int  # the N the points were divided by

    @property
    def scored(self) -> bool:
        return not math.isnan(self.legit_score)


def check_rule(rule: str) -> None:
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")


def _issue_parts(issue_id: str, verdict: Verdict, n: int, rule: str, blocked: bool) -> Parts:
    """The points of one labelled node (`blocked`: a descendant is covered but wrong, official rule)."""
    if issue_id == ROOT_ID:
        if rule == "paper":
            ok = verdict.correct_conclusion
        else:
            ok = verdict.contains_issue and verdict.correct_conclusion and not blocked
        return (FINAL_ORDER_POINTS if ok else 0.0), 0.0, 0.0
    if not verdict.contains_issue or (rule == "official" and blocked):
        return 0.0, 0.0, 0.0
    coverage = COVERAGE_POINTS / n
    return 0.0, coverage, (CORRECTNESS_POINTS / n if verdict.correct_conclusion else 0.0)


def _total(per_node: Sequence[tuple[str, Parts]], issue_ids: Sequence[str], n: int) -> RubricResult:
    """Sum per-node points in the given order (the total as the official scripts add it)."""
    scores: dict[str, float | None] = dict.fromkeys(issue_ids)
    legit_score, totals = 0.0, [0.0, 0.0, 0.0]
    for issue_id, parts in per_node:
        node = sum(parts)
        scores[issue_id] = node
        legit_score += node
        totals = [t + p for t, p in zip(totals, parts, strict=True)]
    return RubricResult(legit_score, totals[0], totals[1], totals[2], scores, n)


def unscored(issue_scores: dict[str, float | None], n: int) -> RubricResult:
    """No score (NaN everywhere), the issue ids kept: an undetermined or unusable verdict set."""
    nan = float("nan")
    return RubricResult(nan, nan, nan, nan, issue_scores, n)


def _tree_score(issue_ids: Sequence[str], labels: Mapping[str, Verdict | None], rule: str) -> RubricResult:
    n = len(issue_ids) - 1
    per_node: list[tuple[str, Parts]] = []
    undetermined: list[str] = []
    for issue_id in issue_ids:
        verdict = labels[issue_id]
        if verdict is None:
            undetermined.append(issue_id)
            continue
        below = [labels[o] for o in issue_ids if is_ancestor(issue_id, o)] if rule == "official" else []
        if any(v is not None and v.covered_but_wrong for v in below):
            blocked = True
        elif any(v is None for v in below):
            # a covered-but-wrong unlabelled descendant could still zero this node
            undetermined.append(issue_id)
            continue
        else:
            blocked = False
        per_node.append((issue_id, _issue_parts(issue_id, verdict, n, rule, blocked)))
    result = _total(per_node, issue_ids, n)
    return unscored(result.issue_scores, n) if undetermined else result


def _script_score(issue_ids: Sequence[str], labels: Mapping[str, Verdict | None], rule: str) -> RubricResult:
    """The released scripts' arithmetic, see the module docstring."""
    judged = {i: v for i, v in labels.items() if v is not None}  # the verdict dict's order
    n = len(judged) - 1
    per_node: list[tuple[str, Parts]] = []
    for issue_id, verdict in judged.items():
        blocked = rule == "official" and any(
            other != issue_id and other.startswith(issue_id) and v.covered_but_wrong
            for other, v in judged.items()
        )
        if issue_id != ROOT_ID and n < 1 and verdict.contains_issue:
            # the script divides by zero here and writes no row; there is nothing to reproduce
            return unscored(dict.fromkeys(issue_ids), n)
        per_node.append((issue_id, _issue_parts(issue_id, verdict, n, rule, blocked)))
    return _total(per_node, issue_ids, n)


def rubric_score(
    issue_ids: Sequence[str],
    labels: Mapping[str, Verdict | None],
    rule: str = "paper",
    official_script: bool = False,
) -> RubricResult:
    """Apply the rubric to the verdicts on every node of one tree (None = no verdict).

    `issue_ids` is the tree (root included) in its order; `labels` must hold every one of them and nothing
    else. Under `official_script` the nodes are added in `labels`' order (the order they were judged).
    """
    check_rule(rule)
    if ROOT_ID not in issue_ids:
        raise ValueError("the issue tree has no root")
    missing = [i for i in issue_ids if i not in labels]
    if missing:
        raise ValueError(f"no label (not even 'unparsable') for issues {missing}")
    tree = set(issue_ids)
    unknown = [i for i in labels if i not in tree]
    if unknown:
        raise ValueError(f"labels for issues that are not in the tree: {unknown}")
    if official_script:
        return _script_score(issue_ids, labels, rule)
    return _tree_score(issue_ids, labels, rule)
