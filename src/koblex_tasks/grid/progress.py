"""A one-line summary per finished run, printed through Inspect's display while the grid runs.

An Inspect hook (`on_task_end`) that is enabled only while a grid is listening, so ordinary `inspect eval`
runs in the same process print nothing extra. Lines go through Inspect's active display (above its live
progress, or after it closes), with stderr as the fallback when that private API is not there.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from inspect_ai.hooks import Hooks, TaskEnd, hooks
from inspect_ai.log import EvalLog
from inspect_ai.util import display_type

from koblex_tasks._inspect_compat import display_print as inspect_display_print
from koblex_tasks.grid.logs import log_path
from koblex_tasks.scorers.metrics import metric_value
from koblex_tasks.spec import BenchmarkSpec

Listener = Callable[[EvalLog], None]
_listeners: list[Listener] = []


def display_print(line: str) -> None:
    """Print through Inspect's active display, else to stderr (also with `--display none`, whose display
    prints nothing, and when the private display moved or is not running)."""
    if display_type() == "none" or not inspect_display_print(line):
        print(line, file=sys.stderr, flush=True)


def summary_line(log: EvalLog, spec: BenchmarkSpec) -> str:
    """`model · method: success, 226 samples, Provision F1 59.41, ... (log name)`."""
    ev = log.eval
    method = (ev.metadata or {}).get("method") or ev.task
    if log.status != "success":
        message = log.error.message.strip().splitlines()[0][:200] if log.error and log.error.message else ""
        return f"{ev.model} · {method}: {log.status}{': ' + message if message else ''} ({log_path(log.location)})"
    means = []
    for score in log.results.scores if log.results else []:
        mean = metric_value(score, "mean")
        if score.name in spec.headline and mean is not None and mean == mean:  # NaN: nothing scored
            means.append(f"{spec.value(score.name).label} {mean * spec.value(score.name).scale:.2f}")
    samples = log.results.completed_samples if log.results else 0
    scores = ", ".join(means) or "no scores"
    return f"{ev.model} · {method}: done, {samples} samples, {scores} ({log_path(log.location)})"


@hooks(name="koblex_grid_progress", description="koblex grid: one line per finished run")
class GridProgress(Hooks):
    """Calls the grid's listeners when a task ends."""

    def enabled(self) -> bool:
        return bool(_listeners)

    async def on_task_end(self, data: TaskEnd) -> None:
        for listener in list(_listeners):
            listener(data.log)


@dataclass
class Progress:
    """Counts finished runs out of `total` and prints their summary lines."""

    spec: BenchmarkSpec
    total: int
    done: int = 0
    started: float = field(default_factory=time.monotonic)

    def __call__(self, log: EvalLog) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.started
        display_print(f"[{self.done}/{self.total}, {elapsed:.0f}s] {summary_line(log, self.spec)}")


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Enable the hook for `listener` while the block runs."""
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)
