"""Errors that name the file and line a bad input came from, so users can fix their data, and the one-line
refusal of a run that cannot start."""

import difflib
import re
import sys
from types import TracebackType

# Inspect's CLI prints a PrerequisiteError as one line with no traceback and exits 1; it has no public import
# path, so this is the package's only import of it.
from inspect_ai._util.error import PrerequisiteError


class DataError(ValueError):
    """A data file is malformed: the message says which file, which line and what is wrong."""

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem


class SetupError(PrerequisiteError, ValueError):
    """A run that cannot start (a bad argument, a missing file, extra or weights; no judge): raised before any
    model call, its message names the fix. A `ValueError` for Python callers."""

    def __init__(self, message: str) -> None:
        PrerequisiteError.__init__(self, message)
        ValueError.__init__(self, message)

    def __str__(self) -> str:
        return str(self.message)


def _display_silenced() -> bool:
    """`--display none` quiets rich's global console, which is where Inspect's hook prints the refusal."""
    import rich

    return bool(rich.get_console().quiet)


UNKNOWN_SOLVER = re.compile(r"Unknown solver (\S+) \(not registered")
NAMESPACE = "koblex_tasks/"


def unknown_solver_line(exc: BaseException) -> str | None:
    """Inspect's unknown-`--solver` error as one line with our solvers listed, when the name is meant for us.

    Meant for us: in our namespace, or a close match of one of our solvers' names; anything else is Inspect's.
    """
    found = UNKNOWN_SOLVER.match(str(exc)) if isinstance(exc, ValueError) else None
    if found is None:
        return None
    from koblex_tasks import solvers

    name = found.group(1)
    bare = name.removeprefix(NAMESPACE)
    close = difflib.get_close_matches(bare, solvers.__all__, n=1, cutoff=0.6)
    if not close and not name.startswith(NAMESPACE):
        return None
    hint = f" (did you mean '{NAMESPACE}{close[0]}'?)" if close else ""
    return f"--solver {name} is not a registered solver{hint}; {NAMESPACE}<name> with one of: {', '.join(solvers.__all__)}"


def keep_refusals_visible() -> None:
    """Inspect's CLI refusals as one visible line: under `--display none` too, and for a misspelt `--solver`.

    `--display none` quiets the console where Inspect prints a refusal (it then prints nothing, exit 1), and an
    unknown solver name is a raw traceback. This wraps only Inspect's own exception hook (installed by its CLI
    before plugins load); every other error goes to it unchanged. The process still exits 1.
    """
    previous = sys.excepthook
    if getattr(previous, "__module__", "") != "inspect_ai._util.error":
        return

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        solver_line = unknown_solver_line(exc)
        if solver_line is not None:
            sys.stderr.write(f"{solver_line}\n")
            return
        if isinstance(exc, PrerequisiteError) and _display_silenced():
            sys.stderr.write(f"{exc.message}\n")
        previous(kind, exc, tb)

    hook.__module__ = "koblex_tasks.errors"
    sys.excepthook = hook
