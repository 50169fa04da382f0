"""Which runs a grid command asks for: models x methods, each with its family and its solver and task arguments.

Arguments of a run, lowest precedence first: the solver's and task's defaults (the paper's protocol, never
restated), the method's `args`, its model group's `group_args`, the family's and the method's `task_args`
(a row of one of the paper's other tables: e.g. Table 4's retriever), then the user's
`-T name=value` (every run) and `-S method.name=value` (one method's runs).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from koblex_tasks.spec import BenchmarkSpec, MethodGrid, MethodSpec, ModelFamily


def grid_for(spec: BenchmarkSpec) -> MethodGrid | None:
    """The benchmark's declared grid (`spec.methods`, from `tasks/<name>/methods.py`), None when it has none."""
    return spec.methods


def model_segment(model: str) -> str:
    """The part of a model name families are matched on: its last path segment, lowercased."""
    return model.rstrip("/").rsplit("/", 1)[-1].lower()


def match_family(model: str, families: Iterable[ModelFamily]) -> ModelFamily | None:
    """The first family one of whose patterns matches the model name (see `ModelFamily`)."""
    segment = model_segment(model)
    for family in families:
        if any(fnmatch.fnmatchcase(segment, p.lower()) for p in family.patterns):
            return family
    return None


@dataclass(frozen=True)
class PlannedRun:
    """One cell of the grid: a model running a method, with every argument that differs from the defaults."""

    model: str
    method: MethodSpec
    family: ModelFamily | None
    solver_args: Mapping[str, Any]
    task_args: Mapping[str, Any]

    @property
    def name(self) -> str:
        return f"{self.model} · {self.method.label}"

    def describe(self) -> str:
        """One line for `--dry-run`: the run and the arguments it passes."""
        parts = [f"{k}={v!r}" for k, v in self.solver_args.items()]
        task = [f"-T {k}={v!r}" for k, v in self.task_args.items()]
        family = f" [{self.family.label}]" if self.family else ""
        return f"{self.name}{family}: {self.method.solver}({', '.join(parts)}) {' '.join(task)}".rstrip()


def select_methods(grid: MethodGrid, names: Sequence[str] | None) -> tuple[MethodSpec, ...]:
    """The named methods in the table's order (default: every method of the table); unknown names raise."""
    if not names:
        return grid.table_methods
    wanted = {grid.method(n).key for n in names}
    return tuple(m for m in grid.methods if m.key in wanted)


def solver_overrides(grid: MethodGrid, overrides: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """`{"flare.threshold": -0.5}` -> `{"flare": {"threshold": -0.5}}`; a bare or unknown method is an error."""
    out: dict[str, dict[str, Any]] = {}
    for dotted, value in overrides.items():
        method, sep, name = dotted.partition(".")
        if not sep or not name:
            raise ValueError(f"-S {dotted}=...: name the method, e.g. -S flare.threshold=-0.5")
        out.setdefault(grid.method(method).key, {})[name] = value
    return out


def plan_grid(
    grid: MethodGrid,
    models: Sequence[str],
    methods: Sequence[MethodSpec],
    task_args: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[PlannedRun]:
    """Every (model, method) run in model-major order; a model named twice is an error."""
    if not models:
        raise ValueError("no model: pass --model (repeat it for several models)")
    seen = [m for n, m in enumerate(models) if m in models[:n]]
    if seen:
        raise ValueError(f"model {seen[0]!r} is named twice")
    unused = set(overrides or {}) - {m.key for m in methods}
    if unused:
        raise ValueError(f"-S for method(s) not in this grid run: {sorted(unused)}")
    runs = []
    for model in models:
        family = match_family(model, grid.families)
        for method in methods:
            solver_args = {
                **method.solver_args(family.group if family else None),
                **(overrides or {}).get(method.key, {}),
            }
            args = {**(family.task_args if family else {}), **method.task_args, **(task_args or {})}
            runs.append(PlannedRun(model, method, family, solver_args, args))
    return runs
