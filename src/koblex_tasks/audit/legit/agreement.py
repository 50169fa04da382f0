"""How well two labellers of LEGIT issue trees agree (lawyer vs lawyer, judge vs lawyer).

LEGIT-specific: which labels a node carries (contains_issue, correct_conclusion, score), that a node's
two labels are resampled together, and that a question's score is the sum of its issue scores. The
statistics themselves are the generic ones of :mod:`koblex_tasks.audit.agreement`.

The headline figure is the paper's: interval alpha on per-question scores *recomputed from the labels under
the paper's rule* (`question_score_by_rule`, see :mod:`koblex_tasks.audit.legit.questions`); the alpha on the
per-question sums of the *stored* issue scores stays in `scores` beside it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from koblex_tasks.audit.agreement import (
    DEFAULT_N_BOOT,
    DEFAULT_SEED,
    BinaryAgreement,
    Estimate,
    ScoreAgreement,
    binary_agreement,
    nominal_clusters,
    score_agreement,
    unit_clusters,
)
from koblex_tasks.audit.legit.labels import LabellerSet, UnitKey
from koblex_tasks.audit.legit.questions import StoredDifferences, official_script_alpha, recompute_questions

__all__ = ["PAPER_RULE", "AgreementReport", "RuleQuestionAgreement", "compare_labellers"]

PAPER_RULE = "paper"


@dataclass(frozen=True, slots=True)
class RuleQuestionAgreement:
    """Interval alpha on per-question scores recomputed from the labels under `rule` (the paper's figure)."""

    rule: str
    agreement: ScoreAgreement
    official_script_alpha: Estimate  # the same scores through the official analysis script's formula
    skipped: int  # shared questions not labelled node for node by both (left out)
    differences: list[StoredDifferences]  # where each labeller's stored scores depart from the rule


@dataclass(frozen=True, slots=True)
class AgreementReport:
    """Everything :func:`compare_labellers` found; ``to_dict`` is JSON-serialisable."""

    labeller_a: str
    labeller_b: str
    units_a: int
    units_b: int
    shared: int
    only_a_count: int
    only_b_count: int
    only_a: list[list[str]]
    only_b: list[list[str]]
    n_boot: int
    seed: int
    binary: list[BinaryAgreement] = field(default_factory=list)
    scores: list[ScoreAgreement] = field(default_factory=list)
    question_score_by_rule: RuleQuestionAgreement | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _question_scores(shared: list[UnitKey], sc_a: np.ndarray, sc_b: np.ndarray) -> np.ndarray:
    """(n_questions, 2): each (generator, doc_id)'s summed shared issue scores for labeller a and b."""
    questions: dict[tuple[str, str], list[float]] = {}
    for key, sa, sb in zip(shared, sc_a, sc_b, strict=True):
        total = questions.setdefault(key[:2], [0.0, 0.0])
        total[0] += sa
        total[1] += sb
    return np.array(list(questions.values()), dtype=float).reshape(-1, 2)


def _label_rows(
    ci_a: np.ndarray, cc_a: np.ndarray, ci_b: np.ndarray, cc_b: np.ndarray, n_boot: int, seed: int
) -> tuple[BinaryAgreement, BinaryAgreement]:
    """contains_issue and correct_conclusion agreement over the shared issue nodes."""
    return (
        binary_agreement(
            "contains_issue", ci_a, ci_b, unit_clusters(ci_a, ci_b), n_boot, seed, "issue nodes"
        ),
        binary_agreement(
            "correct_conclusion", cc_a, cc_b, unit_clusters(cc_a, cc_b), n_boot, seed, "issue nodes"
        ),
    )


def label_agreements(
    a: LabellerSet, b: LabellerSet, *, n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED
) -> tuple[BinaryAgreement, BinaryAgreement]:
    """The contains_issue and correct_conclusion rows of `compare_labellers`, without its other statistics
    (for a table of many pairs that shows only these)."""
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    shared: list[UnitKey] = sorted(set(a) & set(b))
    ci_a, cc_a, _ = np.array([a[k] for k in shared], dtype=float).reshape(-1, 3).T
    ci_b, cc_b, _ = np.array([b[k] for k in shared], dtype=float).reshape(-1, 3).T
    return _label_rows(ci_a, cc_a, ci_b, cc_b, n_boot, seed)


def compare_labellers(
    a: LabellerSet, b: LabellerSet, *, n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED
) -> AgreementReport:
    """Compare two labellers on the units both labelled.

    Binary rows: contains_issue, correct_conclusion and pooled (each node gives one unit per label; the
    bootstrap resamples nodes, keeping a node's two labels together). Score rows: per-issue score, and
    per-question score = sum of the shared issue scores of each (generator, doc_id), resampling questions;
    and the headline, per-question scores recomputed from the labels under the paper's rule.
    Each statistic's bootstrap starts from ``seed``, so per-node statistics see the same resamples.
    """
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    shared: list[UnitKey] = sorted(set(a) & set(b))
    only_a = sorted(set(a) - set(b))
    only_b = sorted(set(b) - set(a))

    ci_a, cc_a, sc_a = np.array([a[k] for k in shared], dtype=float).reshape(-1, 3).T
    ci_b, cc_b, sc_b = np.array([b[k] for k in shared], dtype=float).reshape(-1, 3).T
    nodes = nominal_clusters(
        [(np.array([ci_a[i], cc_a[i]]), np.array([ci_b[i], cc_b[i]])) for i in range(len(shared))]
    )
    binary = [
        *_label_rows(ci_a, cc_a, ci_b, cc_b, n_boot, seed),
        binary_agreement(
            "pooled",
            np.concatenate([ci_a, cc_a]),
            np.concatenate([ci_b, cc_b]),
            nodes,
            n_boot,
            seed,
            "issue nodes (both labels of a node kept together)",
        ),
    ]
    q = _question_scores(shared, sc_a, sc_b)
    scores = [
        score_agreement("issue score", sc_a, sc_b, n_boot, seed, "issue nodes"),
        score_agreement("question score", q[:, 0], q[:, 1], n_boot, seed, "questions"),
    ]
    recomputed = recompute_questions(a, b, PAPER_RULE)
    by_rule = RuleQuestionAgreement(
        rule=PAPER_RULE,
        agreement=score_agreement(
            f"question score ({PAPER_RULE} rule)", recomputed.a, recomputed.b, n_boot, seed, "questions"
        ),
        official_script_alpha=official_script_alpha(recomputed.a, recomputed.b),
        skipped=recomputed.skipped,
        differences=recomputed.differences,
    )
    return AgreementReport(
        labeller_a=a.name,
        labeller_b=b.name,
        units_a=len(a),
        units_b=len(b),
        shared=len(shared),
        only_a_count=len(only_a),
        only_b_count=len(only_b),
        only_a=[list(k) for k in only_a],
        only_b=[list(k) for k in only_b],
        n_boot=n_boot,
        seed=seed,
        binary=binary,
        scores=scores,
        question_score_by_rule=by_rule,
    )
