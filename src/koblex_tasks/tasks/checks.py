"""Task-argument checks shared by every benchmark's task: one message style, one error type.

Every problem is one `TaskArgumentError` (a `SetupError`: one line from `inspect eval`, a `ValueError` for
Python callers) whose message starts with the benchmark's title and names the fix; a misspelt name gets the
closest known one (`difflib`). A malformed data file keeps its file and line (`TaskDataError`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from koblex_tasks.errors import DataError, SetupError
from koblex_tasks.text import closest
from koblex_tasks.text import did_you_mean as hint


class TaskArgumentError(SetupError):
    """A task argument or an input file it names is wrong."""


class TaskDataError(TaskArgumentError, DataError):
    """A data file the task reads is malformed (a `DataError`, printed by Inspect's CLI as one line)."""

    def __init__(self, title: str, error: DataError) -> None:
        DataError.__init__(self, error.path, error.line, error.problem)
        self.message = f"{title}: {error}"  # "KoBLEX: file:line: problem", the text the CLI prints


def did_you_mean(value: object, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest choice, or '' when none is close."""
    return hint(closest(value, choices))


@dataclass(frozen=True)
class ArgumentChecks:
    """The checks of one benchmark's task, its messages prefixed with the benchmark's title."""

    title: str

    def error(self, problem: str) -> TaskArgumentError:
        return TaskArgumentError(f"{self.title}: {problem}")

    def choice(self, name: str, value: object, choices: Collection[str]) -> None:
        if value not in choices:
            raise self.error(
                f"{name}={value!r} is not one of {', '.join(choices)}{did_you_mean(value, choices)}"
            )

    def choices(self, name: str, values: Iterable[str] | None, choices: Collection[str]) -> None:
        for value in values or []:
            self.choice(name, value, choices)

    def flags(self, **values: object) -> None:
        """Arguments that are true or false (`-T judge_reference=maybe` would otherwise count as true)."""
        for name, value in values.items():
            if not isinstance(value, bool):
                raise self.error(f"-T {name}={value!r}: expected true or false")

    def unknown_args(self, unknown: Mapping[str, Any] | Iterable[str], known: Collection[str]) -> None:
        """Task arguments the task does not take (Inspect always passes `model`, which is ignored)."""
        for name in unknown:
            if name != "model":
                raise self.error(
                    f"unknown task argument -T {name}{did_you_mean(name, known)}; known: {', '.join(sorted(known))}"
                )

    def file(self, option: str, path: str | None, what: str) -> None:
        """A file argument names an existing file (a directory is said to be one)."""
        if path is None:
            return
        where = Path(path)
        if where.is_dir():
            raise self.error(f"-T {option}={path}: is a directory, not a {what}")
        if not where.is_file():
            raise self.error(f"-T {option}={path}: {what} not found")

    def strings(self, name: str, value: Any) -> list[str] | None:
        """An argument that takes one value or a list (`-T doc_ids=a,b` arrives as a list), as strings."""
        if value is None:
            return None
        values = value if isinstance(value, list | tuple) else [value]
        if not all(isinstance(v, str | int) and not isinstance(v, bool) for v in values):
            raise self.error(f"{name} must be a string or a list of strings, got {value!r}")
        return [str(v) for v in values]

    @contextmanager
    def as_task_errors(self) -> Iterator[None]:
        """Re-raise input errors (bad data files, bad values) met while building the task as one-line errors;
        a `DataError` stays one (file and line kept), a `SetupError` keeps its own type."""
        try:
            yield
        except SetupError:
            raise
        except DataError as exc:
            raise TaskDataError(self.title, exc) from exc
        except (ValueError, OSError) as exc:
            raise self.error(str(exc)) from exc
