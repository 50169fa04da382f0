"""Replay plumbing shared by both benchmarks: run a replay solver through its task, read the headline back.

A replay is an ordinary Inspect eval whose model is the label `replay/<generator>` (`tasks/replay_model.py`) and
whose solver supplies the released outputs; the scorers run as in any live run.
"""

from typing import Any, Literal

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.solver import Solver

import koblex_tasks.tasks.replay_model  # noqa: F401  (registers the `replay/<name>` model label)
from koblex_tasks.scorers.metrics import metric_value
from koblex_tasks.spec import BenchmarkSpec

Display = Literal["full", "conversation", "rich", "plain", "log", "none"]


def run_replay_eval(
    task: Task,
    solver: Solver,
    generator: str,
    log_dir: str,
    metadata: dict[str, Any],
    display: Display = "none",
    **eval_kwargs: Any,
) -> EvalLog:
    """Evaluate `task` with the replay `solver` under the model label `replay/<generator>`.

    Raises RuntimeError with the log's own error message when the eval did not finish successfully.
    """
    [log] = inspect_eval(
        task,
        solver=solver,
        model=f"replay/{generator}",
        log_dir=log_dir,
        display=display,
        metadata=metadata,
        **eval_kwargs,
    )
    if log.status != "success":
        message = log.error.message if log.error else log.status
        raise RuntimeError(f"replay of {metadata.get('replay_file', generator)} did not finish: {message}")
    return log


def headline_means(log: EvalLog, spec: BenchmarkSpec) -> dict[str, float]:
    """The spec's headline means on the scorers' own scale, for the value keys the run scored at all, followed
    by the primary values of any judge scorer that ran (KoBLEX's LF-Eval when a judge was bound)."""
    judged = [v.key for s in spec.scorers if s.judge for v in s.values if v.primary]
    keys = [*spec.headline, *(k for k in judged if k not in spec.headline)]
    out: dict[str, float] = {}
    for score in log.results.scores if log.results else []:
        mean = metric_value(score, "mean")
        if score.name in keys and score.scored_samples and mean is not None:
            out[score.name] = mean
    return {k: out[k] for k in keys if k in out}
