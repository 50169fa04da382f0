"""One visible line for a run Inspect's CLI refuses: our setup errors, a misspelt `--solver`, `--display none`.

Inspect's CLI installs an exception hook before it loads plugins; `keep_refusals_visible` (called by
`koblex_tasks._registry`) wraps that hook only. Our `SetupError` is printed as its plain message (no rich
markup, which would eat `[rerank]` in an install hint), an unknown solver meant for us names our solvers with
a close match, and Inspect's own `PrerequisiteError` still reaches stderr under `--display none` (which quiets
the console Inspect prints to). Every other error goes to Inspect's hook unchanged; the process exits 1.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Sequence
from types import TracebackType

from koblex_tasks._inspect_compat import INSPECT_EXCEPTHOOK_MODULE, PrerequisiteError
from koblex_tasks.errors import SetupError

UNKNOWN_SOLVER = re.compile(r"Unknown solver (\S+) \(not registered")
NAMESPACE = "koblex_tasks/"


def _display_silenced() -> bool:
    """`--display none` quiets rich's global console, which is where Inspect's hook prints the refusal."""
    import rich

    return bool(rich.get_console().quiet)


def registered_solver_names() -> list[str]:
    """Every solver of every registered benchmark, by its short name."""
    from koblex_tasks.tasks import benchmarks

    return sorted({name.removeprefix(NAMESPACE) for b in benchmarks() for name in b.solver_names})


def unknown_solver_line(exc: BaseException, known: Sequence[str] | None = None) -> str | None:
    """Inspect's unknown-`--solver` error as one line with our solvers listed, when the name is meant for us.

    Meant for us: in our namespace, or a close match of one of our solvers' names; anything else is Inspect's.
    """
    found = UNKNOWN_SOLVER.match(str(exc)) if isinstance(exc, ValueError) else None
    if found is None:
        return None
    names = list(known) if known is not None else registered_solver_names()
    name = found.group(1)
    bare = name.removeprefix(NAMESPACE)
    close = difflib.get_close_matches(bare, names, n=1, cutoff=0.6)
    if not close and not name.startswith(NAMESPACE):
        return None
    hint = f" (did you mean '{NAMESPACE}{close[0]}'?)" if close else ""
    return (
        f"--solver {name} is not a registered solver{hint}; {NAMESPACE}<name> with one of: {', '.join(names)}"
    )


def keep_refusals_visible() -> None:
    """Wrap Inspect's CLI exception hook (and nothing else) so a refusal is one visible line."""
    previous = sys.excepthook
    if getattr(previous, "__module__", "") != INSPECT_EXCEPTHOOK_MODULE:
        return

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        solver_line = unknown_solver_line(exc)
        if solver_line is not None:
            sys.stderr.write(f"{solver_line}\n")
            return  # an uncaught exception: the interpreter exits 1
        if isinstance(exc, SetupError):
            stream = sys.stderr if _display_silenced() else sys.stdout
            stream.write(f"\n{exc.message}\n\n")
            stream.flush()
            return
        if isinstance(exc, PrerequisiteError) and _display_silenced():
            sys.stderr.write(f"{exc.message}\n")
        previous(kind, exc, tb)

    hook.__module__ = __name__
    sys.excepthook = hook
