"""Errors that name the file and line a bad input came from, so users can fix their data, the one-line
refusal of a run that cannot start, and the refusal of a logged score that declares another protocol.

The bottom layer: it imports nothing but the standard library (not even Inspect, so the corpus path stays light). Inspect's CLI shows a
`SetupError` as its message alone through the hook in `koblex_tasks.cli.refusals`.
"""

import csv
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class DataError(ValueError):
    """A data file is malformed: the message says which file, which line and what is wrong."""

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem


class _LineCounting(Protocol):
    @property
    def line_num(self) -> int: ...


@contextmanager
def csv_errors(path: str, reader: _LineCounting) -> Iterator[None]:
    """The csv module's own errors (a field over its 131,072-character limit, a NUL byte, an unclosed quote)
    as a `DataError` naming the file and line: `_csv.Error` is no ValueError, so it would escape as a
    traceback."""
    try:
        yield
    except csv.Error as exc:
        raise DataError(path, reader.line_num or None, f"malformed CSV: {exc}") from None


class SetupError(ValueError):
    """A run that cannot start (a bad argument, a missing file, extra or weights; no judge): raised before any
    model call, its message names the fix. A `ValueError` for Python callers."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return str(self.message)


class RederivationRefused(ValueError):
    """A logged score whose declared protocol is not the spec's (another rule, prompt or judging mode): its
    re-derivation refuses it, and the leaderboard reports this message as the reason, not as a missing record."""
