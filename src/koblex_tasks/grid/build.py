"""Planned runs as Inspect tasks: the benchmark's registered task with the method's solver as its `solver`
argument, the run's model, and the method recorded in the eval metadata.

Both come from Inspect's registry by name (`registry_create`), so the grid never imports a benchmark's task
or solvers. The solver is passed as the task's own `solver` argument (not swapped in afterwards), so the task
sees the method while it is built (a closed-book method needs no retriever) and the log's task arguments name
it, as with `inspect eval ... -T solver=...`. The eval metadata gets `method` (the leaderboard's run name uses
it) and `grid` (method, family, the arguments the grid passed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai import Task, task_with
from inspect_ai.util import registry_create

from koblex_tasks.grid.methods import MethodGrid
from koblex_tasks.grid.plan import PlannedRun
from koblex_tasks.spec import BenchmarkSpec

GRID_METADATA_KEY = "grid"


def grid_metadata(grid: MethodGrid, run: PlannedRun) -> dict[str, Any]:
    """What the log records about the run's place in the grid."""
    return {
        "table": grid.table,
        "method": run.method.key,
        "label": run.method.label,
        "family": run.family.key if run.family else None,
        "solver": run.method.solver,
        "solver_args": dict(run.solver_args),
        "task_args": dict(run.task_args),
    }


def build_task(spec: BenchmarkSpec, grid: MethodGrid, run: PlannedRun, judge: bool) -> Task:
    """The run's task, built now (its data and retriever are checked before any model call)."""
    solver = registry_create("solver", run.method.solver, **run.solver_args)
    args: dict[str, Any] = {**run.task_args, "solver": solver}
    if grid.judge_arg:
        args.setdefault(grid.judge_arg, judge)
    built = registry_create("task", spec.task, **args)
    metadata = {**(built.metadata or {}), "method": run.method.key, GRID_METADATA_KEY: grid_metadata(grid, run)}
    return task_with(built, model=run.model, metadata=metadata)


def build_tasks(spec: BenchmarkSpec, grid: MethodGrid, runs: Sequence[PlannedRun], judge: bool) -> list[Task]:
    return [build_task(spec, grid, run, judge) for run in runs]
