"""Errors that name the file and line a bad input came from, so users can fix their data, and the one-line
refusal of a run that cannot start."""

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
