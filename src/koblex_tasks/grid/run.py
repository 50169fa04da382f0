"""One `eval_set` over every run of the grid: resumable, parallel, every run an ordinary log.

Inspect's eval set pairs each task with its log in the log directory by task identifier (task arguments,
model, solver plan, generate config, model roles, version): a re-run of the same command reuses finished
logs untouched and runs only what is missing or failed (resuming a failed log's finished samples). Other
logs in the directory (another grid's models, released replays) are left alone (`log_dir_allow_dirty`).
Task-level retries default to none (`retry_attempts=0`): a deterministic failure (e.g. a provider without
log-probabilities for FLARE) should not sleep through Inspect's exponential back-off; re-running the command
is the retry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai import Task, eval_set
from inspect_ai.log import EvalLog

from koblex_tasks.grid.logs import log_locations, log_path
from koblex_tasks.grid.progress import Progress, listening
from koblex_tasks.spec import BenchmarkSpec


@dataclass(frozen=True)
class GridOutcome:
    """What the eval set returned: every run's log header, and which logs were there before it started."""

    success: bool
    logs: list[EvalLog]
    existing: frozenset[str]  # log paths (resolved) present before this command

    @property
    def reused(self) -> list[EvalLog]:
        return [log for log in self.logs if log_path(log.location) in self.existing]

    @property
    def failed(self) -> list[EvalLog]:
        return [log for log in self.logs if log.status != "success"]


def run_grid(
    spec: BenchmarkSpec,
    tasks: Sequence[Task],
    log_dir: str,
    model_roles: Mapping[str, Any] | None = None,
    limit: int | None = None,
    max_tasks: int | None = None,
    retry_attempts: int = 0,
    display: str | None = None,
    model_args: Mapping[str, Any] | None = None,
    **generate: Any,
) -> GridOutcome:
    """Run (or finish) `tasks` in `log_dir`; `generate` holds generate-config options (max_connections, ...)."""
    existing = frozenset(log_locations(log_dir))
    progress = Progress(spec, total=len(tasks))
    with listening(progress):
        success, logs = eval_set(
            list(tasks),
            log_dir=log_dir,
            model=None,  # every task carries its own model
            model_args=dict(model_args or {}),
            model_roles=dict(model_roles) if model_roles else None,
            limit=limit,
            max_tasks=max_tasks,
            retry_attempts=retry_attempts,
            retry_immediate=retry_attempts > 0,  # Inspect warns that immediate retries need attempts
            log_dir_allow_dirty=True,
            display=display,  # type: ignore[arg-type]  # validated by the CLI's choice of Inspect's types
            **{k: v for k, v in generate.items() if v is not None},
        )
    return GridOutcome(success, list(logs), existing)
