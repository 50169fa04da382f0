"""Every private Inspect name the package uses, in one place, so an Inspect upgrade is one file to check.

Checked against inspect_ai 0.3.285 (`INSPECT_CHECKED`); `tests/test_inspect_compat.py` resolves each name
below against the installed Inspect, so a move fails one test that names it instead of a run. Code elsewhere
imports Inspect's public API only (`inspect_ai`, `inspect_ai.model`, `.solver`, `.scorer`, `.log`, ...).

Names that may disappear are read defensively here (the caller gets a fallback, not an ImportError).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any

from inspect_ai._util.error import PrerequisiteError
from inspect_ai._util.registry import registry_create, registry_find, registry_info
from inspect_ai.log import transcript
from inspect_ai.model import GenerateConfig, Model
from inspect_ai.model._generate_config import active_generate_config
from inspect_ai.model._model import active_model
from inspect_ai.model._providers.mockllm import MockLLM
from inspect_ai.solver import SolverSpec
from inspect_ai.solver._constants import SOLVER_ALL_PARAMS_ATTR
from inspect_ai.solver._task_state import sample_state
from inspect_ai.util import display_counter

INSPECT_CHECKED = "0.3.285"

# Module and attribute of each private name read lazily below (the test resolves these too).
EVAL_RUNNING = ("inspect_ai._eval.eval", "_eval_async_running")
INIT_MODEL_ROLES = ("inspect_ai.model._model", "init_model_roles")
PARSE_CLI_ARGS = ("inspect_ai._util.config", "parse_cli_args")
ACTIVE_DISPLAY = ("inspect_ai._display.core.active", "display")
# The coroutine of `eval()` whose `solver` argument is the run's `--solver` / `eval(solver=...)`.
EVAL_SOLVER_FRAME = ("inspect_ai._eval.eval", "_eval_async_inner")
INSPECT_EXCEPTHOOK_MODULE = "inspect_ai._util.error"  # where Inspect's CLI exception hook is defined

__all__ = [
    "ACTIVE_DISPLAY",
    "EVAL_RUNNING",
    "EVAL_SOLVER_FRAME",
    "INIT_MODEL_ROLES",
    "INSPECT_CHECKED",
    "INSPECT_EXCEPTHOOK_MODULE",
    "PARSE_CLI_ARGS",
    "MockLLM",
    "PrerequisiteError",
    "active_generate_config",
    "active_model",
    "current_sample_metadata",
    "display_print",
    "eval_running",
    "eval_solver",
    "model_api_names",
    "parse_cli_args",
    "pending_base_url",
    "record_info",
    "registry_name",
    "run_generate_config",
    "set_model_roles",
    "show_counter",
    "solver_params",
    "under_inspect_cli",
]


def _lookup(where: tuple[str, str]) -> Any | None:
    """A private attribute by module and name; None when it moved."""
    module, name = where
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def eval_running() -> bool | None:
    """Is an `eval()` running now (Inspect's private flag)? None when the flag is not there to read."""
    running = _lookup(EVAL_RUNNING)
    return None if running is None else bool(running)


def eval_solver() -> object | None:
    """The solver the running eval will use instead of its tasks' own (`--solver`, `eval(solver=...)`), or None.

    Inspect builds a task before that solver and tells the task nothing of it, so a task that must know which
    method runs (to check only what that method needs) reads it from the eval's frame. A command line's
    `SolverSpec` is built from the registry with its arguments; one that cannot be built is returned as is.
    """
    module, function = EVAL_SOLVER_FRAME
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == function and frame.f_globals.get("__name__") == module:
            break
        frame = frame.f_back
    if frame is None:
        return None
    solver = frame.f_locals.get("solver")
    if isinstance(solver, SolverSpec):
        try:
            return registry_create("solver", solver.solver, **solver.args)
        except Exception:  # not a registered name (a file's solver), or arguments Inspect will refuse itself
            return solver
    return solver


def registry_name(obj: object, kind: str | None = None) -> str | None:
    """The registry name of a registered solver/scorer/task object (of `kind`, when given); None if not."""
    try:
        info = registry_info(obj)
    except (ValueError, AttributeError):
        return None
    return str(info.name) if kind is None or info.type == kind else None


def solver_params(solver: object) -> dict[str, Any]:
    """The arguments (defaults included) a registered solver was built with."""
    return dict(getattr(solver, SOLVER_ALL_PARAMS_ATTR, {}) or {})


def set_model_roles(roles: Mapping[str, Model | list[Model]]) -> bool:
    """Make `roles` the active model roles (as `eval()` does before building tasks); False if not possible."""
    init = _lookup(INIT_MODEL_ROLES)
    if init is None:  # pragma: no cover - the private setter moved
        return False
    init(dict(roles))
    return True


def parse_cli_args(pairs: tuple[str, ...]) -> dict[str, Any] | None:
    """`NAME=VALUE` pairs parsed exactly as `inspect eval -T` parses them; None when the parser moved."""
    parse: Callable[[tuple[str, ...]], Mapping[str, Any]] | None = _lookup(PARSE_CLI_ARGS)
    return None if parse is None else dict(parse(pairs))


def display_print(line: str) -> bool:
    """Print through Inspect's active display; False when there is none (the caller prints plainly)."""
    display = _lookup(ACTIVE_DISPLAY)
    if display is None:
        return False
    try:
        display().print(line)
    except Exception:  # the display is not running
        return False
    return True


def under_inspect_cli() -> bool:
    """Is this process Inspect's CLI? Its exception hook (or one wrapping it, `cli.refusals`) is installed."""
    import sys

    hook_module = getattr(sys.excepthook, "__module__", "")
    return hook_module in (INSPECT_EXCEPTHOOK_MODULE, "koblex_tasks.cli.refusals")


def current_sample_metadata() -> dict[str, Any] | None:
    """The running sample's metadata (its TaskState's, which the log records), or None outside a sample."""
    state = sample_state()
    return None if state is None else state.metadata


def record_info(source: str, data: dict[str, Any]) -> bool:
    """An info event in the running sample's transcript; False outside a sample (nothing recorded)."""
    if sample_state() is None:
        return False
    transcript().info(data, source=source)
    return True


def show_counter(caption: str, value: str) -> None:
    """A counter in Inspect's task display (a no-op when no display is running)."""
    with contextlib.suppress(Exception):  # no display, or one that does not show counters
        display_counter(caption, value)


def run_generate_config(model: Model) -> GenerateConfig:
    """The run's own generation settings (command line, task, model config), before any per-call config."""
    active: GenerateConfig = active_generate_config()
    return active.merge(model.config)


def model_api_names() -> list[str]:
    """The providers `--model <provider>/...` accepts (every registered model API), without namespaces."""
    found = registry_find(lambda info: info.type == "modelapi")
    return sorted({registry_info(api).name.rsplit("/", 1)[-1] for api in found})


def pending_base_url(api: object) -> str | None:
    """The server URL of a provider that connects lazily (vLLM: its `base_url` arg or `VLLM_BASE_URL`)."""
    url = getattr(api, "_init_base_url", None)
    return str(url) if url else None
