"""`koblex replay FILE`: run a released KoBLEX prediction file through the KoBLEX task and report the means."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog

from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.data.koblex.alignment import Alignment, align_released_file
from koblex_tasks.data.koblex.released import infer_method_and_model
from koblex_tasks.solvers.koblex.replay import replay
from koblex_tasks.tasks.benchmark import Replay, Replayed, ReplayRequest
from koblex_tasks.tasks.koblex.task import koblex
from koblex_tasks.tasks.replay import Display, headline_means, run_replay_eval


@dataclass(frozen=True)
class ReplayResult:
    log: EvalLog
    method: str
    model: str
    headline: dict[str, float]
    alignment: dict[str, int] = field(default_factory=dict)  # rule -> rows it aligned (text, question, order)
    alignment_line: str = ""  # `Alignment.summary()`, printed by `koblex replay`


def check_alignment(file: str, data: str | None) -> Alignment:
    """Every question must have exactly one prediction (and vice versa), before any eval starts."""
    return align_released_file(file, data)


def run_replay(
    file: str,
    data: str | None = None,
    official: bool = False,
    log_dir: str = "logs",
    method: str | None = None,
    model_name: str | None = None,
    display: Display = "none",
    grader: str | None = None,
    judge_variant: Mapping[str, Any] | None = None,
) -> ReplayResult:
    """Replay a released prediction file; with `grader`, the judge also scores LF-Eval on the released answers,
    reading what `judge_variant` says (the task's `judge_context` / `judge_reference`; default the paper's)."""
    variant = check_judge_variant(judge_variant, grader)
    alignment = check_alignment(file, data)
    counts, order_lines, lowest = alignment.counts(), alignment.lines("order"), alignment.lowest_similarity()
    summary = alignment.summary()
    inferred_method, inferred_model = infer_method_and_model(file)
    method = method or inferred_method or Path(file).stem
    model_name = model_name or inferred_model or "unknown"
    solver = replay(file=file, method=method, model_name=model_name, data=data)
    log = run_replay_eval(
        # built with the replay solver, so the task loads no corpus and checks no reranker (nothing retrieves)
        koblex(data=data, official=official, solver=solver, judge=grader is not None, **variant),
        solver,
        model_name,
        log_dir,
        metadata={
            "replay_file": str(file),
            "method": method,
            "replay_alignment": counts,
            "replay_order_lines": order_lines,
            "replay_alignment_summary": summary,
            "replay_lowest_similarity": lowest[0] if lowest is not None else None,
        },
        display=display,
        **({"model_roles": {KOBLEX.judge_role: grader}} if grader is not None else {}),
    )
    return ReplayResult(
        log=log,
        method=method,
        model=model_name,
        headline=headline_means(log, KOBLEX),
        alignment=counts,
        alignment_line=summary,
    )


def check_judge_variant(variant: Mapping[str, Any] | None, grader: object) -> dict[str, Any]:
    """The judge-variant task arguments to replay with; refuses another argument, or a variant without a judge
    (nothing would read it), before the file is read."""
    variant = dict(variant or {})
    unknown = KOBLEX.unknown_judge_variant_args(variant)
    if unknown:
        raise ValueError(
            f"judge variant {unknown}: not a judge variant argument of KoBLEX "
            f"({', '.join(KOBLEX.judge_variant_args)})"
        )
    if KOBLEX.judge_variant(variant) and grader is None:
        raise ValueError(f"judge variant {variant}: no judge grades the released answers (pass a grader)")
    return variant


def owns_file(first_row: Mapping[str, Any]) -> bool:
    """A KoBLEX prediction file's rows hold `question` and `answers`."""
    return "question" in first_row and "answers" in first_row


def replay_request(request: ReplayRequest) -> Replayed:
    """`koblex replay FILE` (and the grid's released runs): the log, its summary lines and headline."""
    if request.verdicts:
        raise ValueError(
            "--verdicts replays a LEGIT evaluator file; a KoBLEX prediction file has no verdicts"
        )
    result = run_replay(
        request.file,
        **request.options("data", "official", "log_dir", "method", "model_name", "grader", "judge_variant"),
    )
    summary = f"method: {result.method}  model: {result.model}  log: {result.log.location}"
    # on the spec's display scale (x100 for F1 and EM, LF-Eval is already 0-100)
    table = [
        f"  {name:<14} {KOBLEX.value(name).scale * value:6.2f}" for name, value in result.headline.items()
    ]
    return Replayed(result.log, [summary, result.alignment_line, *table], result.headline)


REPLAY = Replay(run=replay_request, owns=owns_file)
