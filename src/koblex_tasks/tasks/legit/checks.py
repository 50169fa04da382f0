"""The LEGIT task's arguments, checked when the task is built, before any model call.

Each problem is one `TaskArgumentError`: a `ValueError` for Python callers, and an Inspect `PrerequisiteError`
so that `inspect eval koblex_tasks/legit -T ...` prints it as one line instead of a traceback. A misspelt
choice names the closest valid one (`difflib`).
"""

import difflib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from koblex_tasks.errors import DataError, SetupError


class TaskArgumentError(SetupError):
    """A task argument or an input file it names is wrong."""


class TaskDataError(SetupError, DataError):
    """A data file the task reads is malformed (a `DataError`, printed by Inspect's CLI as one line)."""

    def __init__(self, error: DataError) -> None:
        DataError.__init__(self, error.path, error.line, error.problem)
        self.message = str(error)  # "file:line: problem", the text Inspect's CLI prints


@contextmanager
def as_task_argument_errors() -> Iterator[None]:
    """Re-raise input errors (bad data files, bad values) met while building the task as one-line errors;
    a `DataError` stays one (file and line kept)."""
    try:
        yield
    except SetupError:  # already one line (e.g. no judge bound): keep its own type
        raise
    except DataError as exc:
        raise TaskDataError(exc) from exc
    except (ValueError, OSError) as exc:
        raise TaskArgumentError(str(exc)) from exc


def as_strings(name: str, value: Any) -> list[str] | None:
    """A task argument that takes one value or a list (`-T doc_ids=a,b` arrives as a list), as strings."""
    if value is None:
        return None
    values = value if isinstance(value, list | tuple) else [value]
    if not all(isinstance(v, str | int) and not isinstance(v, bool) for v in values):
        raise TaskArgumentError(f"{name} must be a string or a list of strings, got {value!r}")
    return [str(v) for v in values]


def suggestion(value: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(value, list(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise TaskArgumentError(
            f"{name} must be one of {', '.join(choices)}, got {value!r}{suggestion(value, choices)}"
        )


def check_choices(name: str, values: list[str] | None, choices: tuple[str, ...]) -> None:
    for value in values or []:
        check_choice(name, value, choices)
