"""One visible line for a run Inspect's CLI refuses: our setup errors, a misspelt `--solver`, `-S` argument,
task or provider, a model that cannot be loaded, `--display none`.

Inspect's CLI installs an exception hook before it loads plugins; `keep_refusals_visible` (called by
`koblex_tasks._registry`) wraps that hook only. Our `SetupError` is printed as its plain message (no rich
markup, which would eat `[rerank]` in an install hint); an unknown solver or task meant for us names ours with a
close match; an unexpected `-S` argument of one of our solvers names its parameters, a value it refuses (`-S k=0`)
its reason; an unknown provider names
the installed ones; a model whose construction fails is its first line; Inspect's own `PrerequisiteError`
still reaches stderr under `--display none` (which quiets the console Inspect prints to). Every other error
goes to Inspect's hook unchanged; the process exits 1.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any

from koblex_tasks._inspect_compat import INSPECT_EXCEPTHOOK_MODULE, PrerequisiteError, model_api_names
from koblex_tasks.errors import SetupError
from koblex_tasks.text import closest, did_you_mean

UNKNOWN_SOLVER = re.compile(r"Unknown solver (\S+) \(not registered")
UNEXPECTED_ARGUMENT = re.compile(r"(\w+)\(\) got an unexpected keyword argument '(\w+)'")
UNKNOWN_PROVIDER = re.compile(r"Model API (\S+) of model '([^']+)' not recognized")
BARE_MODEL = re.compile(r"Model name '([^']*)' should be in the format of <api_name>/<model_name>")
NO_TASKS = "No inspect tasks were found"
NAMESPACE = "koblex_tasks/"


def _display_silenced() -> bool:
    """`--display none` quiets rich's global console, which is where Inspect's hook prints the refusal."""
    import rich

    return bool(rich.get_console().quiet)


def registered_solver_names(argv: Sequence[str] | None = None) -> list[str]:
    """The solvers, by short name, of the benchmarks whose tasks the command line names (`argv`, default
    `sys.argv`); of every registered benchmark when it names none of them."""
    from koblex_tasks.tasks import benchmarks

    args = set(sys.argv[1:] if argv is None else argv)
    named = [b for b in benchmarks() if str(b.spec.task) in args] or benchmarks()
    return sorted({name.removeprefix(NAMESPACE) for b in named for name in b.solver_names})


def unknown_solver_line(
    exc: BaseException, known: Sequence[str] | None = None, argv: Sequence[str] | None = None
) -> str | None:
    """Inspect's unknown-`--solver` error as one line with our solvers listed, when the name is meant for us.

    Meant for us: in our namespace, or a close match of one of our solvers' names; anything else is Inspect's.
    """
    found = UNKNOWN_SOLVER.match(str(exc)) if isinstance(exc, ValueError) else None
    if found is None:
        return None
    names = list(known) if known is not None else registered_solver_names(argv)
    name = found.group(1)
    bare = name.removeprefix(NAMESPACE)
    close = closest(bare, names)
    if close is None and not name.startswith(NAMESPACE):
        return None
    hint = did_you_mean(f"{NAMESPACE}{close}" if close else None)
    return (
        f"--solver {name} is not a registered solver{hint}; {NAMESPACE}<name> with one of: {', '.join(names)}"
    )


def _our_solvers() -> dict[str, Callable[..., Any]]:
    """Our solver factories by their function name (what a TypeError names)."""
    from koblex_tasks.tasks import benchmarks

    return {factory.__name__: factory for b in benchmarks() for factory in b.solvers}


def solver_argument_line(
    exc: BaseException, solvers: dict[str, Callable[..., Any]] | None = None
) -> str | None:
    """`-S kk=3` for one of our solvers: the solver's parameters, with a close match."""
    found = UNEXPECTED_ARGUMENT.match(str(exc)) if isinstance(exc, TypeError) else None
    if found is None:
        return None
    name, argument = found.groups()
    factory = (solvers if solvers is not None else _our_solvers()).get(name)
    if factory is None:
        return None
    params = [p for p in inspect.signature(factory).parameters if p not in ("args", "kwargs")]
    return (
        f"-S {argument}: {NAMESPACE}{name} has no parameter '{argument}'{did_you_mean(closest(argument, params))}; "
        f"its parameters: {', '.join(params)}"
    )


def solver_value_line(
    exc: BaseException, tb: TracebackType | None, solvers: Mapping[str, Callable[..., Any]] | None = None
) -> str | None:
    """A value one of our solvers refuses while Inspect builds it (`-S k=0`): the solver and its reason."""
    if not isinstance(exc, ValueError) or isinstance(exc, SetupError):  # a SetupError is printed as it is
        return None
    names = solvers if solvers is not None else _our_solvers()
    ours = (
        f.f_code.co_name
        for f in _frames(tb)
        if f.f_code.co_name in names
        and str(f.f_globals.get("__name__", "")).startswith("koblex_tasks.solvers")
    )
    name = next(ours, None)
    if name is None:
        return None
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    return f"--solver {NAMESPACE}{name}: {first}"


def provider_line(exc: BaseException, known: Sequence[str] | None = None) -> str | None:
    """A misspelt provider (`ollam/llama3`) or a model without one (`openai`), with the installed providers."""
    if not isinstance(exc, ValueError):
        return None
    names = list(known) if known is not None else model_api_names()
    unknown = UNKNOWN_PROVIDER.match(str(exc))
    if unknown is not None:
        api, model = unknown.groups()
        close = closest(api, names)
        hint = f" (did you mean '{model.replace(api, close, 1)}'?)" if close else ""
        return f"--model {model}: no provider '{api}' is installed{hint}; installed: {', '.join(names)}"
    bare = BARE_MODEL.match(str(exc))
    if bare is not None:
        return (
            f"--model {bare.group(1)}: a model is <provider>/<model>, e.g. openai/gpt-4o, vllm/Qwen/Qwen3-8B or "
            "koblexmock/x (a mock run)"
        )
    return None


def task_line(exc: BaseException, argv: Sequence[str] | None = None) -> str | None:
    """Inspect's bare "No inspect tasks were found" when the name given is one of ours, misspelt."""
    if NO_TASKS not in str(exc):
        return None
    from koblex_tasks.tasks import benchmarks

    ours = sorted(str(b.spec.task) for b in benchmarks())
    args = list(sys.argv[1:] if argv is None else argv)
    # positional arguments only: an option's value (`--model koblexmock/x`) is not a task name
    given = [
        a for i, a in enumerate(args) if not a.startswith("-") and (i == 0 or not args[i - 1].startswith("-"))
    ]
    for name in given:
        close = closest(name, ours, cutoff=0.75)
        if close is not None or name.startswith(NAMESPACE):
            return f"{name} is not a task{did_you_mean(close)}; ours: {', '.join(ours)}"
    return None


def model_load_line(exc: BaseException, tb: TracebackType | None) -> str | None:
    """A model whose provider failed to build it (an hf/ model not found, say): the model and the first line."""
    frame = next(
        (f for f in _frames(tb) if f.f_code.co_name == "get_model" and "original_model" in f.f_locals), None
    )
    if frame is None or isinstance(exc, PrerequisiteError):
        return None
    # a role's model is built by Inspect's `_resolve_role_model(role, model)`, which passes no role on
    role = next(
        (f.f_locals.get("role") for f in _frames(tb) if f.f_code.co_name == "_resolve_role_model"), None
    )
    flag = f"--model-role {role}=" if isinstance(role, str) else "--model "
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    return f"{flag}{frame.f_locals['original_model']}: cannot be loaded: {first}"


def _frames(tb: TracebackType | None) -> Iterator[Any]:
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next


def _leaf(exc: BaseException) -> BaseException:
    """The one exception inside (nested) exception groups, which Inspect's task group raises."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def refusal_line(exc: BaseException, tb: TracebackType | None = None) -> str | None:
    """The one line for an error a user caused on the command line, or None for Inspect to show."""
    leaf = _leaf(exc)
    for line in (unknown_solver_line(leaf), solver_argument_line(leaf), provider_line(leaf), task_line(leaf)):
        if line is not None:
            return line
    return solver_value_line(leaf, leaf.__traceback__ or tb) or model_load_line(
        leaf, leaf.__traceback__ or tb
    )


def keep_refusals_visible() -> None:
    """Wrap Inspect's CLI exception hook (and nothing else) so a refusal is one visible line."""
    previous = sys.excepthook
    if getattr(previous, "__module__", "") != INSPECT_EXCEPTHOOK_MODULE:
        return

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        line = refusal_line(exc, tb)
        if line is not None:
            sys.stderr.write(f"{line}\n")
            return  # an uncaught exception: the interpreter exits 1
        leaf = _leaf(exc)
        if isinstance(leaf, SetupError):
            stream = sys.stderr if _display_silenced() else sys.stdout
            stream.write(f"\n{leaf.message}\n\n")
            stream.flush()
            return
        if isinstance(exc, PrerequisiteError) and _display_silenced():
            sys.stderr.write(f"{exc.message}\n")
        previous(kind, exc, tb)

    hook.__module__ = __name__
    sys.excepthook = hook
