"""`koblex replay` for LEGIT: released responses graded by a judge, or released verdicts replayed (no judge).

* `run_legit_replay(FILE, grader=J)`: a response file (`{"doc_id", "response"}`), graded by the judge `J`.
* `run_verdict_replay(FILE)`: an evaluator file (`reasoning_tasks_<generator>_evaluator_<judge>.jsonl`), whose
  rows hold the responses *and* the judge's per-issue verdicts: scored with our rubric under the chosen rule
  without calling any model, and every row checked against its stored score (`VerdictReplay`).
"""

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.log import EvalLog
from inspect_ai.model import Model

from koblex_tasks.benchmarks.legit.spec import DIFFICULTIES, LEGIT, LEGIT_RUBRIC, REPLAYED_KEY
from koblex_tasks.data.legit.responses import infer_model_name
from koblex_tasks.data.legit.verdicts import load_verdicts
from koblex_tasks.scorers.legit.arithmetic import RULES
from koblex_tasks.scorers.legit.rubric import rescore
from koblex_tasks.solvers.legit.replay import legit_replay
from koblex_tasks.solvers.legit.verdicts import legit_verdicts
from koblex_tasks.tasks.benchmark import Replay, Replayed, ReplayRequest
from koblex_tasks.tasks.legit.task import NO_GRADER_MESSAGE, legit
from koblex_tasks.tasks.replay import Display, headline_means, run_replay_eval

SCORE_KEY = LEGIT.ranking  # "legit_score"


def run_legit_replay(
    file: str,
    data: str | None = None,
    grader: str | Model | list[str | Model] | None = None,
    log_dir: str = "logs",
    rule: str = "paper",
    model_name: str | None = None,
    restrict: bool = True,
    official_script: bool = False,
    judge_retries: int = 2,
    display: Display = "none",
    **eval_kwargs: Any,
) -> EvalLog:
    """Score a LEGIT response file with the judge `grader`; returns the (successful) log.

    `restrict=True` keeps only documents the file answers (a missing response is otherwise an error).
    """
    if grader is None:
        raise ValueError(NO_GRADER_MESSAGE)
    generator = model_name or infer_model_name(file)
    return run_replay_eval(
        legit(
            data=data,
            rule=rule,
            official_script=official_script,
            judge_retries=judge_retries,
            responses=file if restrict else None,
        ),
        legit_replay(file=file, model_name=generator),
        generator,
        log_dir,
        metadata={"replay_file": str(file), "generator": generator},
        display=display,
        model_roles={LEGIT.judge_role: grader},
        **eval_kwargs,
    )


# ----------------------------------------------------------------------------------------------------------
# Released verdicts


@dataclass(frozen=True)
class Mismatch:
    doc_id: str
    stored: float
    recomputed: float | None
    issues: list[str]  # issues whose stored per-issue score differs


STRATA_MEAN = LEGIT.stratum.strata_mean_label or "mean"


def _means(values: dict[str, list[float]]) -> dict[str, float]:
    """Mean per difficulty and the mean of those means (the paper's headline), over the values given."""
    means = {d: sum(v) / len(v) for d in DIFFICULTIES if (v := values.get(d))}
    if means:
        means[STRATA_MEAN] = sum(means.values()) / len(means)
    return means


@dataclass
class VerdictReplay:
    """A verdict replay's log and what it found, per difficulty, per rule and per row.

    `scores[rule]` holds every row's score under each rule with the run's arithmetic (the run's own rule is
    what the log reports; the others are recomputed from the labels the log records, with `rescore`);
    `stored` the released scores, averaged as the official stats script does.
    """

    log: EvalLog
    generator: str
    judge: str
    rule: str
    official_script: bool
    headline: dict[str, float]
    rows: Counter[str] = field(default_factory=Counter)  # difficulty -> rows
    scores: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # rule -> difficulty -> scores
    stored: dict[str, list[float]] = field(default_factory=dict)  # difficulty -> stored scores
    lacking_issues: int = 0  # rows without a verdict for some issue of the tree
    invalid: int = 0  # rows with non-boolean labels or issue ids outside the tree
    reproduced: Counter[str] = field(
        default_factory=Counter
    )  # rule -> rows whose stored scores it reproduces
    mismatches: dict[str, list[Mismatch]] = field(default_factory=dict)  # rule -> rows it does not reproduce

    @property
    def n(self) -> int:
        return sum(self.rows.values())

    def means(self, rule: str | None = None) -> dict[str, float]:
        """Per-difficulty means (and their mean) under `rule` (default: the run's), unscored rows left out."""
        return _means(self.scores.get(rule or self.rule, {}))

    def stored_means(self) -> dict[str, float]:
        return _means(self.stored)

    def best_rule(self) -> str:
        """The rule that reproduces the most stored rows (the released scripts' "official" on a tie)."""
        return max(RULES, key=lambda r: (self.reproduced[r], r == "official"))

    def lines(self) -> list[str]:
        """The human-readable report `koblex replay --verdicts` prints above its JSON line."""
        arithmetic = "the official script's" if self.official_script else "ours"
        out = [
            f"scoring: rule={self.rule} (in the log), arithmetic {arithmetic}; judge {self.judge} "
            "(replayed verdicts, no model called)"
        ]
        columns = [*(f"rule {r}" for r in RULES), "stored"]
        means = [*(self.means(r) for r in RULES), self.stored_means()]
        counts = [*({d: len(v) for d, v in self.scores.get(r, {}).items()} for r in RULES), None]
        out.append(f"  {'difficulty':<16} {'rows':>5}" + "".join(f" {c:>17}" for c in columns))
        for d in (*DIFFICULTIES, STRATA_MEAN):
            rows = self.rows[d] if d in DIFFICULTIES else self.n
            cells = []
            for mean, n in zip(means, counts, strict=True):
                scored = "" if n is None or d not in DIFFICULTIES else f" ({n.get(d, 0)})"
                cells.append(f" {_fmt(mean.get(d)) + scored:>17}")
            out.append(f"  {d:<16} {rows:>5}" + "".join(cells))
        fate = (
            "scored with N shrunk, as the official script did"
            if self.official_script
            else "unscored, never rescaled"
        )
        out.append(f"rows lacking issues: {self.lacking_issues} ({fate})")
        out.append(
            f"rows with unusable verdicts (non-boolean labels, issue ids not in the tree): {self.invalid}"
        )
        best = self.best_rule()
        reproduced = ", ".join(f"rule {r} {self.reproduced[r]}/{self.n}" for r in RULES)
        out.append(f"stored scores reproduced exactly by the official script's arithmetic: {reproduced}")
        for m in self.mismatches.get(best, []):
            detail = f", issues {m.issues}" if m.issues else ""
            out.append(
                f"  not reproduced by rule {best}: {m.doc_id} stored {m.stored!r}, recomputed {m.recomputed!r}{detail}"
            )
        return out


def _fmt(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.4f}"


def _summarise(result: VerdictReplay) -> None:
    """Per row: its scores under every rule (re-derived from the logged labels), the stored-score check."""
    for sample in result.log.samples or []:
        score = (sample.scores or {}).get(LEGIT_RUBRIC.name)
        if score is None or not score.metadata:
            continue
        meta = score.metadata
        difficulty = str(meta.get("difficulty"))
        result.rows[difficulty] += 1
        for rule in RULES:
            value = rescore(sample, score, rule, result.official_script)[SCORE_KEY]
            if value is not None:
                result.scores.setdefault(rule, {}).setdefault(difficulty, []).append(value)
        replay = meta[REPLAYED_KEY]
        check = replay["stored_check"]
        result.stored.setdefault(difficulty, []).append(check["stored_score"])
        result.lacking_issues += bool(replay["missing"])
        result.invalid += bool(replay["invalid"] or replay["extra"])
        for rule in RULES:
            by_rule = check["by_rule"][rule]
            if by_rule["reproduced"]:
                result.reproduced[rule] += 1
            else:
                mismatch = Mismatch(
                    str(sample.id), check["stored_score"], by_rule["score"], by_rule["issues_differing"]
                )
                result.mismatches.setdefault(rule, []).append(mismatch)


def run_verdict_replay(
    file: str,
    data: str | None = None,
    log_dir: str = "logs",
    rule: str = "paper",
    official_script: bool = False,
    model_name: str | None = None,
    display: Display = "none",
    **eval_kwargs: Any,
) -> VerdictReplay:
    """Replay a released evaluator file: its responses graded by its own verdicts, no model or judge called.

    Every row must grade a document of `data` (else a DataError before the eval starts); the run keeps the
    documents the file covers. The log is an ordinary `koblex_tasks/legit` log whose judge is
    `replay/<evaluator_model>`.
    """
    verdicts = load_verdicts(file)
    generator = model_name or verdicts.generator
    log = run_replay_eval(
        legit(data=data, rule=rule, official_script=official_script, verdicts=file),
        legit_verdicts(file=file, model_name=generator),
        generator,
        log_dir,
        metadata={"replay_file": str(file), "generator": generator, "judge_model": verdicts.judge},
        display=display,
        **eval_kwargs,
    )
    result = VerdictReplay(
        log=log,
        generator=generator,
        judge=verdicts.judge,
        rule=rule,
        official_script=official_script,
        headline=headline_means(log, LEGIT),
    )
    _summarise(result)
    return result


def owns_file(first_row: Mapping[str, Any]) -> bool:
    """LEGIT response and evaluator files have `doc_id` and `response`."""
    return "doc_id" in first_row and "response" in first_row


def has_verdicts(first_row: Mapping[str, Any]) -> bool:
    """An evaluator file's rows carry the judge's verdicts."""
    return "evaluation_result" in first_row


SHARED_OPTIONS = ("data", "log_dir", "rule", "model_name")  # what both LEGIT runners take from a request


def replay_request(request: ReplayRequest) -> Replayed:
    """`koblex replay FILE --grader J` (responses graded by J) or `--verdicts` (graded by their own verdicts)."""
    if request.verdicts:
        result = run_verdict_replay(
            request.file, **request.options(*SHARED_OPTIONS, official_script="official")
        )
        summary = (
            f"benchmark: {LEGIT.name}  generator: {result.generator}  judge: {result.judge}  "
            f"log: {result.log.location}"
        )
        return Replayed(result.log, [summary, *result.lines()], result.headline)
    log = run_legit_replay(
        request.file, **request.options(*SHARED_OPTIONS, "grader", official_script="official")
    )
    generator = (log.eval.metadata or {}).get("generator")
    summary = f"benchmark: {LEGIT.name}  generator: {generator}  log: {log.location}"
    return Replayed(log, [summary], headline_means(log, LEGIT))


REPLAY = Replay(run=replay_request, owns=owns_file, has_verdicts=has_verdicts)
