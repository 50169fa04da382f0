"""Question scores recomputed from a labeller's issue labels under a rubric rule (the paper's, by default).

The human annotation files store a score per issue, and their per-question sums are not the paper's rule: in
the released `human_group*.json` two group-2 roots score 5 with `correct_conclusion` 0, and sub-issues are
weighted 5/(N+1) with correctness counted without coverage (`legit/LABELS.md`). The paper's human-human
agreement is on the rule's scores, so the audit recomputes each question's score from its labels with the
rubric's own `rubric_score`, and says where the stored scores differ from it.

Only questions both labellers labelled node for node (root included) are recomputed: N is the number of the
tree's non-root nodes, so a partial tree would give the wrong weights.

The official analysis script computes interval alpha with its own formula, whose expected disagreement divides
the pooled sum of squares by the 2n values rather than by 2n - 1 (Krippendorff's definition);
`official_script_alpha` is that figure, reported beside the exact one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from koblex_tasks.audit.agreement import Estimate
from koblex_tasks.audit.legit.labels import LabellerSet, UnitLabels
from koblex_tasks.benchmarks.legit.issues import ROOT_ID, issue_path
from koblex_tasks.scorers.legit.arithmetic import Verdict, rubric_score

__all__ = [
    "QuestionScores",
    "StoredDifferences",
    "official_script_alpha",
    "own_question_scores",
    "recompute_questions",
]

Question = tuple[str, str]  # (generator, doc_id)
TOLERANCE = 1e-9  # stored scores are decimal text of floats: equal up to the last bits


@dataclass(frozen=True, slots=True)
class StoredDifferences:
    """Where one labeller's stored scores depart from the rule's, over the recomputed questions."""

    labeller: str
    questions: int  # questions whose stored sum differs from the recomputed score
    roots: list[list[str]] = field(default_factory=list)  # root units whose stored score differs
    sub_issues: int = 0  # non-root units whose stored score differs


@dataclass(frozen=True, slots=True)
class QuestionScores:
    """Both labellers' recomputed scores of the questions they labelled node for node."""

    rule: str
    keys: list[Question]
    a: np.ndarray
    b: np.ndarray
    skipped: int  # shared questions left out: node sets differ, no root, or ids that are not issue ids
    differences: list[StoredDifferences]


def _tree_order(ids: Iterable[str]) -> list[str] | None:
    """Issue ids in tree order (root first, depth first), or None when one is not an issue id."""
    try:
        return sorted(ids, key=issue_path)
    except ValueError:
        return None


def _by_question(labeller: LabellerSet) -> dict[Question, dict[str, UnitLabels]]:
    out: dict[Question, dict[str, UnitLabels]] = defaultdict(dict)
    for (generator, doc_id, issue_id), labels in labeller.items():
        out[(generator, doc_id)][issue_id] = labels
    return out


def _score(ids: list[str], units: dict[str, UnitLabels], rule: str) -> tuple[float, dict[str, float | None]]:
    labels = {i: Verdict(bool(units[i].contains_issue), bool(units[i].correct_conclusion)) for i in ids}
    result = rubric_score(ids, labels, rule)
    return result.legit_score, result.issue_scores


def _differences(
    name: str,
    question_units: dict[Question, dict[str, UnitLabels]],
    recomputed: dict[Question, tuple[float, dict]],
) -> StoredDifferences:
    roots: list[list[str]] = []
    sub_issues = questions = 0
    for key, (total, per_issue) in recomputed.items():
        units = question_units[key]
        stored_total = sum(units[i].score for i in per_issue)
        questions += abs(stored_total - total) > TOLERANCE
        for issue_id, score in per_issue.items():
            if score is not None and abs(units[issue_id].score - score) > TOLERANCE:
                if issue_id == ROOT_ID:
                    roots.append([*key, issue_id])
                else:
                    sub_issues += 1
    return StoredDifferences(name, questions, roots, sub_issues)


def recompute_questions(a: LabellerSet, b: LabellerSet, rule: str = "paper") -> QuestionScores:
    """Question scores of `a` and `b` under `rule`, on the questions both labelled node for node."""
    qa, qb = _by_question(a), _by_question(b)
    shared = sorted(set(qa) & set(qb))
    keys: list[Question] = []
    scores_a: dict[Question, tuple[float, dict]] = {}
    scores_b: dict[Question, tuple[float, dict]] = {}
    for key in shared:
        ids = _tree_order(qa[key])
        if ids is None or set(qa[key]) != set(qb[key]) or ROOT_ID not in qa[key]:
            continue
        keys.append(key)
        scores_a[key] = _score(ids, qa[key], rule)
        scores_b[key] = _score(ids, qb[key], rule)
    return QuestionScores(
        rule=rule,
        keys=keys,
        a=np.array([scores_a[k][0] for k in keys], dtype=float),
        b=np.array([scores_b[k][0] for k in keys], dtype=float),
        skipped=len(shared) - len(keys),
        differences=[_differences(a.name, qa, scores_a), _differences(b.name, qb, scores_b)],
    )


def own_question_scores(labeller: LabellerSet, rule: str = "paper") -> dict[Question, float]:
    """Each question's score under `rule` from one labeller's labels, for the questions it labelled with a root
    (a labeller compared with a Likert judge, which has no issue labels to align node for node)."""
    out: dict[Question, float] = {}
    for key, units in sorted(_by_question(labeller).items()):
        ids = _tree_order(units)
        if ids is not None and ROOT_ID in units:
            out[key] = _score(ids, units, rule)[0]
    return out


def official_script_alpha(a: np.ndarray, b: np.ndarray) -> Estimate:
    """Interval alpha as the official analysis script computes it: 1 - D_o / D_e with D_o the mean squared
    pair difference and D_e twice the *population* variance of the 2n pooled values (Krippendorff: 2n - 1)."""
    if a.size == 0:
        return Estimate(None, "no shared units")
    pooled = np.concatenate([a, b])
    d_e = 2.0 * float(np.mean((pooled - pooled.mean()) ** 2))
    if d_e <= 0.0:
        return Estimate(None, "all values identical: expected disagreement is 0, so alpha is undefined")
    return Estimate(1.0 - float(np.mean((a - b) ** 2)) / d_e)
