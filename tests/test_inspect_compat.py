"""Every private Inspect name the package uses resolves against the installed Inspect (`_inspect_compat`), and
nothing outside that module imports one: an Inspect upgrade that moves a name fails here, by name."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from inspect_ai.model import ModelAPI

from koblex_tasks import _inspect_compat as compat

PACKAGE = Path(compat.__file__).resolve().parent
PRIVATE = re.compile(r"inspect_ai(\.[A-Za-z0-9_]+)*\._")


@pytest.mark.parametrize(
    "where",
    [
        compat.EVAL_RUNNING,
        compat.EVAL_SOLVER_FRAME,
        compat.INIT_MODEL_ROLES,
        compat.PARSE_CLI_ARGS,
        compat.ACTIVE_DISPLAY,
    ],
)
def test_each_lazily_read_private_name_resolves(where: tuple[str, str]) -> None:
    module, name = where
    assert hasattr(importlib.import_module(module), name), (
        f"{module}.{name} moved (checked: {compat.INSPECT_CHECKED})"
    )


def test_the_eagerly_imported_names_are_what_the_package_expects() -> None:
    assert issubclass(compat.MockLLM, ModelAPI) and callable(compat.active_generate_config)
    assert compat.PrerequisiteError.__module__ == compat.INSPECT_EXCEPTHOOK_MODULE
    assert importlib.import_module(compat.INSPECT_EXCEPTHOOK_MODULE).exception_hook.__module__ == (
        compat.INSPECT_EXCEPTHOOK_MODULE
    )
    assert compat.eval_running() in (True, False)  # the private flag is there to read
    assert compat.parse_cli_args(("k=05", "lang=no")) == {"k": 5, "lang": False}


def test_the_solver_helpers_read_a_registered_solver() -> None:
    from koblex_tasks.solvers.koblex.parser import parser

    built = parser(k=7)
    assert compat.registry_name(built) == "koblex_tasks/parser"
    assert compat.registry_name(parser, "solver") == "koblex_tasks/parser"
    assert compat.registry_name(parser, "scorer") is None
    assert compat.solver_params(built)["k"] == 7


def test_the_eval_solver_is_read_from_evals_own_argument() -> None:
    """`eval_solver` reads the `solver` argument of Inspect's `_eval_async_inner`; outside an eval it is None."""
    import inspect

    module, function = compat.EVAL_SOLVER_FRAME
    assert "solver" in inspect.signature(getattr(importlib.import_module(module), function)).parameters
    assert compat.eval_solver() is None


def test_no_other_module_imports_a_private_inspect_name() -> None:
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "_inspect_compat.py" and PRIVATE.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
