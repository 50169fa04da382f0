"""Planned runs as Inspect tasks: the benchmark's registered task with the method's solver as its `solver`
argument, the run's model, and the method recorded in the eval metadata.

Both come from Inspect's registry by name (`registry_create`), so the grid never imports a benchmark's task
or solvers. The solver is passed as the task's own `solver` argument (not swapped in afterwards), so the task
sees the method while it is built (a closed-book method needs no retriever) and the log's task arguments name
it, as with `inspect eval ... -T solver=...`. The eval metadata gets `method` (the leaderboard's run name uses
it) and `grid` (method, family, the arguments the grid passed).

Tasks are built before the eval set starts, so the bound model roles are made visible while they are built,
as `inspect eval` does before it calls a task function: a task that asks whether a judge is bound (KoBLEX adds
LF-Eval, LEGIT refuses to start without one) sees the same answer as under `inspect eval`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from inspect_ai import Task, task_with
from inspect_ai.model import Model, get_model
from inspect_ai.util import registry_create

from koblex_tasks._inspect_compat import set_model_roles
from koblex_tasks.grid.plan import PlannedRun
from koblex_tasks.judge_role import ROLES_SET_BY_BUILDER
from koblex_tasks.solvers.preflight import check_model
from koblex_tasks.spec import BenchmarkSpec, MethodGrid
from koblex_tasks.tasks.concurrency import connection_config

GRID_METADATA_KEY = "grid"
T = TypeVar("T")
Roles = Mapping[str, str | list[str]]


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


def with_roles(roles: Roles, build: Callable[[], T]) -> T:
    """`build()` with `roles` as the active model roles, in a copied context (nothing leaks out).

    Inspect's setter is private (`_inspect_compat.set_model_roles`); without it `build` runs as is (a task
    then sees no judge while being built, and LEGIT's run-time check still refuses without one).
    """

    def run() -> T:
        bound: dict[str, Model | list[Model]] = {
            role: [get_model(m) for m in value] if isinstance(value, list) else get_model(value)
            for role, value in roles.items()
        }
        if set_model_roles(bound):
            ROLES_SET_BY_BUILDER.set(True)
        return build()

    return contextvars.copy_context().run(run)


def check_solvers(runs: Sequence[PlannedRun]) -> None:
    """Build each run's solver once (cheap: no data, no model), so an argument its solver does not take (e.g.
    `select` of a method without selection) or a value it refuses (k < 1) is one line before any run starts."""
    for run in runs:
        try:
            registry_create("solver", run.method.solver, **run.solver_args)
        except TypeError as exc:  # an argument the solver does not have
            raise ValueError(f"method {run.method.key}: {exc}") from exc
        except ValueError as exc:
            raise ValueError(f"method {run.method.key}: {exc}") from exc


def build_task(spec: BenchmarkSpec, grid: MethodGrid, run: PlannedRun) -> Task:
    """The run's task, built now (its data and retriever are checked before any model call)."""
    solver = registry_create("solver", run.method.solver, **run.solver_args)
    built = registry_create("task", spec.task, **run.task_args, solver=solver)
    metadata = {
        **(built.metadata or {}),
        "method": run.method.key,
        GRID_METADATA_KEY: grid_metadata(grid, run),
    }
    model = get_model(run.model)
    return task_with(built, model=model, metadata=metadata, config=connection_config(built.config, model))


def build_tasks(
    spec: BenchmarkSpec, grid: MethodGrid, runs: Sequence[PlannedRun], roles: Roles
) -> list[Task]:
    """Every run's task; each model the grid evaluates is checked first (the tasks' own preflight checks the
    judge roles: the grid builds them before any eval makes a model active)."""
    checked: set[str] = set()
    for model in dict.fromkeys(run.model for run in runs):
        check_model("--model ", get_model(model), checked)
    return with_roles(roles, lambda: [build_task(spec, grid, run) for run in runs])
