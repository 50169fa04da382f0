"""`koblex replay FILE`: run a released KoBLEX prediction file through the KoBLEX task and report the means."""

from dataclasses import dataclass, field
from pathlib import Path

from inspect_ai.log import EvalLog

from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.data.koblex.alignment import Alignment, align_released_file
from koblex_tasks.data.koblex.released import infer_method_and_model
from koblex_tasks.replay.run import Display, headline_means, run_replay_eval
from koblex_tasks.solvers.koblex import replay
from koblex_tasks.tasks.koblex.task import koblex


@dataclass(frozen=True)
class ReplayResult:
    log: EvalLog
    method: str
    model: str
    headline: dict[str, float]
    alignment: dict[str, int] = field(default_factory=dict)  # rule -> rows it aligned (text, question, order)
    order_lines: tuple[int, ...] = ()  # file lines placed by row order (near-identical wordings)

    @property
    def alignment_line(self) -> str:
        """`aligned rows: text 222, question 0, order 4 (lines 98, 107, 194, 199)`, printed by `koblex replay`."""
        counts = ", ".join(f"{rule} {n}" for rule, n in self.alignment.items())
        lines = f" (lines {', '.join(map(str, self.order_lines))})" if self.order_lines else ""
        return f"aligned rows: {counts}{lines}"


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
) -> ReplayResult:
    """Replay a released prediction file; with `grader`, the judge also scores LF-Eval on the released answers."""
    alignment = check_alignment(file, data)
    counts, order_lines = alignment.counts(), alignment.lines("order")
    inferred_method, inferred_model = infer_method_and_model(file)
    method = method or inferred_method or Path(file).stem
    model_name = model_name or inferred_model or "unknown"
    solver = replay(file=file, method=method, model_name=model_name, data=data)
    log = run_replay_eval(
        # built with the replay solver, so the task loads no corpus and checks no reranker (nothing retrieves)
        koblex(data=data, official=official, solver=solver, judge=grader is not None),
        solver,
        model_name,
        log_dir,
        metadata={
            "replay_file": str(file),
            "method": method,
            "replay_alignment": counts,
            "replay_order_lines": order_lines,
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
        order_lines=tuple(order_lines),
    )
