"""Solvers are registered where they are defined: a benchmark's solver package lists itself by walking its files.

Adding a method is its module (and its prompt files): every public module of the package is imported, and
each `@solver` defined there joins the benchmark. A module that retrieves nothing says so with
`RETRIEVES = False` beside its solver, so a task built with it loads no corpus.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from koblex_tasks._inspect_compat import registry_name


@dataclass(frozen=True)
class SolverPackage:
    """The solvers one package defines, in module order, and which of them retrieve nothing."""

    solvers: tuple[Callable[..., Any], ...]
    retrieval_free: frozenset[str]


def discover_solvers(package: str) -> SolverPackage:
    """Every `@solver` defined in the public modules of `package` (files not starting with `_`)."""
    root = importlib.import_module(package)
    solvers: list[Callable[..., Any]] = []
    free: set[str] = set()
    for info in sorted(pkgutil.iter_modules(root.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        for obj in vars(module).values():
            name = registry_name(obj, "solver")
            if name is None or getattr(obj, "__module__", None) != module.__name__:
                continue
            solvers.append(obj)
            if getattr(module, "RETRIEVES", True) is False:
                free.add(name)
    return SolverPackage(tuple(solvers), frozenset(free))


def retrieves(solver: object) -> bool:
    """Does a built solver retrieve? Its defining module says `RETRIEVES = False` when it does not."""
    module = sys.modules.get(getattr(solver, "__module__", "") or "")
    return getattr(module, "RETRIEVES", True) is not False
