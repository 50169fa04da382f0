"""Which judge to trust: every LEGIT judge against the lawyers and against every other judge, in one table.

Raters: the lawyer groups of a labels CSV (`human_labels.csv`), and per LEGIT log its rubric judge (issue labels
and the question's score) and, when the log carries `legit_likert`, its Likert judge (a 0-10 score per
question). A unit is an issue node `(generator, doc_id, issue_id)`, a question `(generator, doc_id)`.

Per pair of raters, on what both rated: nominal Krippendorff alpha on `contains_issue` and on
`correct_conclusion` (issue level, when both have issue labels), and interval alpha on the question's score
(score level), each with the percentile bootstrap of the agreement engine (`audit.agreement`, on the one
statistics engine's resamples). A lawyer's question score is recomputed from the lawyer's labels under the
paper's rule (as the lawyer-vs-judge audit does); a judge's is the score its log recorded.

The paper's comparison (its case for the rubric): judges agree with each other more under the rubric than under
a Likert judgment of the whole answer. For every two judge models that ran both, the rubric pair's score-level
alpha stands beside the Likert pair's, and each protocol's alpha with the lawyers beside the other's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

import numpy as np
from inspect_ai.log import EvalLog, read_eval_log

from koblex_tasks.audit.agreement import DEFAULT_N_BOOT, DEFAULT_SEED, ScoreAgreement, score_agreement
from koblex_tasks.audit.legit.agreement import label_agreements
from koblex_tasks.audit.legit.judge_labels import generator_name, load_judge_labels_from_log
from koblex_tasks.audit.legit.labels import LabellerSet, labeller_from_records
from koblex_tasks.audit.legit.questions import own_question_scores
from koblex_tasks.errors import DataError

__all__ = ["Figure", "JudgeTable", "PairRow", "Rater", "compare_raters", "format_markdown", "raters_from_log"]

Kind = Literal["lawyers", "rubric", "likert"]
Question = tuple[str, str]
RUBRIC, LIKERT = "legit_rubric", "legit_likert"


@dataclass(frozen=True)
class Rater:
    name: str
    kind: Kind
    judge: str | None  # the judge model (None for lawyers): pairs a model's rubric and Likert runs
    labels: LabellerSet | None  # issue-level labels (None for a Likert judge)
    questions: Mapping[Question, float]  # score level: 0-10 per question


@dataclass(frozen=True)
class Figure:
    """One alpha with its interval and the units it rests on; None with a reason when undefined."""

    units: int
    alpha: float | None
    low: float | None
    high: float | None
    reason: str | None = None


@dataclass(frozen=True)
class PairRow:
    a: str
    b: str
    kind_a: Kind
    kind_b: Kind
    contains_issue: Figure | None  # None: one of the two has no issue labels
    correct_conclusion: Figure | None
    score: Figure


@dataclass(frozen=True)
class Comparison:
    """Rubric vs Likert for one pair of judge models (score-level alpha under each protocol)."""

    judge_a: str
    judge_b: str
    rubric: Figure
    likert: Figure


@dataclass
class JudgeTable:
    raters: list[dict[str, Any]]
    pairs: list[PairRow]
    rubric_vs_likert: list[Comparison]
    with_lawyers: list[
        dict[str, Any]
    ]  # per judge model: score-level alpha with each lawyer group, by protocol
    n_boot: int
    seed: int
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def rater_row(rater: Rater) -> dict[str, Any]:
    """A rater as the table lists it: who, which kind and judge, how many questions and issues it labelled."""
    issues = len(rater.labels) if rater.labels is not None else None
    row = {"name": rater.name, "kind": rater.kind, "judge": rater.judge, "questions": len(rater.questions)}
    return {**row, "issues": issues}


def _figure(units: int, alpha: Any, ci: Any) -> Figure:
    reason = alpha.reason or ci.reason
    return Figure(units, alpha.value, ci.low, ci.high, reason)


def _judge_model(log: EvalLog, scorer: str) -> str:
    """The judge of `scorer` in `log`: the score metadata's `judge_model`, else the grader role's model."""
    for sample in log.samples or []:
        score = (sample.scores or {}).get(scorer)
        judge = (score.metadata or {}).get("judge_model") if score is not None else None
        if judge:
            return str(judge)
    grader = (log.eval.model_roles or {}).get("grader")
    return str(getattr(grader, "model", None) or "judge")


def _question_scores(log: EvalLog, scorer: str, key: str) -> dict[Question, float]:
    out: dict[Question, float] = {}
    for sample in log.samples or []:
        score = (sample.scores or {}).get(scorer)
        if score is None or not isinstance(score.value, Mapping):
            continue
        value = score.value.get(key)
        if isinstance(value, int | float) and math.isfinite(value):
            doc_id = str(
                (score.metadata or {}).get("doc_id") or (sample.metadata or {}).get("doc_id") or sample.id
            )
            out[(generator_name(log, sample.metadata), doc_id)] = float(value)
    return out


def raters_from_log(path: str | Path | EvalLog) -> list[Rater]:
    """The judges a LEGIT log holds: its rubric judge and, when scored, its Likert judge."""
    log = path if isinstance(path, EvalLog) else read_eval_log(str(path))
    where = str(log.location or path)
    if not log.samples:
        raise DataError(where, None, "the log has no samples (header-only read?)")
    scorers = {name for s in log.samples for name in (s.scores or {})}
    label = Path(where).name
    raters: list[Rater] = []
    if RUBRIC in scorers:
        judge = _judge_model(log, RUBRIC)
        name = f"rubric {judge} ({label})"
        labels = labeller_from_records(name, load_judge_labels_from_log(log))
        raters.append(Rater(name, "rubric", judge, labels, _question_scores(log, RUBRIC, "legit_score")))
    if LIKERT in scorers:
        judge = _judge_model(log, LIKERT)
        raters.append(
            Rater(
                f"likert {judge} ({label})",
                "likert",
                judge,
                None,
                _question_scores(log, LIKERT, "likert_score"),
            )
        )
    if not raters:
        raise DataError(where, None, f"no {RUBRIC} or {LIKERT} scores (scorers: {sorted(scorers)})")
    return raters


def lawyer_raters(groups: Mapping[str, LabellerSet]) -> list[Rater]:
    """Each lawyer group, its question scores recomputed from its labels under the paper's rule."""
    return [Rater(g.name, "lawyers", None, g, own_question_scores(g)) for g in groups.values()]


def _score_figure(a: Rater, b: Rater, n_boot: int, seed: int) -> tuple[Figure, ScoreAgreement]:
    shared = sorted(set(a.questions) & set(b.questions))
    x = np.array([a.questions[q] for q in shared], dtype=float)
    y = np.array([b.questions[q] for q in shared], dtype=float)
    agreement = score_agreement("question score", x, y, n_boot, seed, "questions")
    return _figure(agreement.units, agreement.alpha, agreement.alpha_ci), agreement


def _pair(a: Rater, b: Rater, n_boot: int, seed: int) -> PairRow:
    contains = correct = None
    if a.labels is not None and b.labels is not None:
        contains, correct = (
            _figure(row.units, row.alpha, row.alpha_ci)
            for row in label_agreements(a.labels, b.labels, n_boot=n_boot, seed=seed)
        )
    score, _ = _score_figure(a, b, n_boot, seed)
    return PairRow(a.name, b.name, a.kind, b.kind, contains, correct, score)


def compare_raters(
    raters: Sequence[Rater], *, n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED
) -> JudgeTable:
    """Every pair of raters (lawyers first, then judges in the given order), and the rubric-vs-Likert view."""
    names = [r.name for r in raters]
    if len(set(names)) != len(names):
        raise ValueError(f"two raters share a name: {names}")
    pairs = [_pair(a, b, n_boot, seed) for a, b in combinations(raters, 2)]
    by_pair = {(p.a, p.b): p for p in pairs} | {(p.b, p.a): p for p in pairs}
    judges = [r for r in raters if r.kind != "lawyers"]
    lawyers = [r for r in raters if r.kind == "lawyers"]
    protocol = {(r.judge, r.kind): r for r in judges}  # the first log of a model under a protocol
    both = [
        m
        for m in dict.fromkeys(r.judge for r in judges)
        if (m, "rubric") in protocol and (m, "likert") in protocol
    ]
    comparisons = [
        Comparison(
            str(x),
            str(y),
            by_pair[(protocol[(x, "rubric")].name, protocol[(y, "rubric")].name)].score,
            by_pair[(protocol[(x, "likert")].name, protocol[(y, "likert")].name)].score,
        )
        for x, y in combinations(both, 2)
    ]
    with_lawyers = [
        {
            "judge": r.judge,
            "protocol": r.kind,
            "rater": r.name,
            "lawyers": {h.name: asdict(by_pair[(h.name, r.name)].score) for h in lawyers},
        }
        for r in judges
    ]
    notes = []
    if lawyers and not any(by_pair[(h.name, j.name)].score.units for h in lawyers for j in judges):
        notes.append("no judged question is in the labels CSV: the lawyer figures are empty")
    if len(both) < 2:
        notes.append("rubric vs Likert needs two judge models that ran both protocols")
    listed = [rater_row(r) for r in raters]
    return JudgeTable(listed, pairs, comparisons, with_lawyers, n_boot, seed, notes)


def _cell(f: Figure | None) -> str:
    if f is None:
        return "—"
    if f.alpha is None:
        return f"n/a (n={f.units})"
    ci = "" if f.low is None or f.high is None else f" [{f.low:.2f}, {f.high:.2f}]"
    return f"{f.alpha:.3f}{ci} (n={f.units})"


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def format_markdown(table: JudgeTable) -> str:
    """The pair table, the judges-vs-lawyers view and the rubric-vs-Likert comparison, as Markdown."""
    lines = [
        "### LEGIT judges: Krippendorff's alpha per pair",
        "",
        f"95% percentile bootstrap intervals, {table.n_boot} resamples, seed {table.seed}; n = shared units "
        "(issue nodes for the two issue-level columns, questions for the score).",
        "",
        "| rater A | rater B | contains_issue α | correct_conclusion α | score α |",
        "|---|---|---|---|---|",
    ]
    for p in table.pairs:
        cells = [_md(p.a), _md(p.b), _cell(p.contains_issue), _cell(p.correct_conclusion), _cell(p.score)]
        lines.append("| " + " | ".join(cells) + " |")
    if table.rubric_vs_likert:
        lines += [
            "",
            "### Rubric vs Likert: judge-judge agreement on the score",
            "",
            "| judge A | judge B | rubric α | Likert α |",
            "|---|---|---|---|",
        ]
        for c in table.rubric_vs_likert:
            lines.append(f"| {_md(c.judge_a)} | {_md(c.judge_b)} | {_cell(c.rubric)} | {_cell(c.likert)} |")
        defined = [(c.rubric.alpha, c.likert.alpha) for c in table.rubric_vs_likert]
        rubric = [r for r, _ in defined if r is not None]
        likert = [v for _, v in defined if v is not None]
        if rubric and likert:
            lines += ["", f"mean over pairs: rubric {np.mean(rubric):.3f}, Likert {np.mean(likert):.3f}"]
    if table.notes:
        lines += ["", *(f"note: {n}" for n in table.notes)]
    return "\n".join(lines)


def load_raters(labels: str | Path | None, logs: Iterable[str | Path]) -> list[Rater]:
    """Lawyer groups of `labels` (when given) and the judges of every log."""
    from koblex_tasks.audit.legit.labels import labellers_by_group, load_labels

    raters = lawyer_raters(labellers_by_group(load_labels(labels))) if labels is not None else []
    for log in logs:
        raters += raters_from_log(log)
    return raters
