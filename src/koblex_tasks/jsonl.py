"""Strict JSONL reading: every bad line is a DataError naming file and line, never a crash later on."""

import functools
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from koblex_tasks.errors import DataError

try:  # orjson parses several times faster (a 250K-paragraph corpus loads in ~1 s instead of ~2)
    import orjson

    _loads: Callable[[bytes], Any] = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency; stay correct without it
    _loads = json.loads


T = TypeVar("T")
FileSignature = tuple[str | None, int, int]


def file_signature(path: str | Path | None) -> FileSignature:
    """A file's identity for per-process caches (resolved path, size, mtime): a changed file is read again."""
    if path is None or not os.path.isfile(path):
        return (None if path is None else str(path)), 0, 0
    stat = os.stat(path)
    return str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns


def read_once(load: Callable[[str], T]) -> Callable[[str | Path], T]:
    """`load(path)` memoised per process by the file's identity, so a build-time check, the task and its
    solver share one strict read of the same unchanged file. Errors are not cached; results are shared, so
    callers must not mutate them."""

    @functools.lru_cache(maxsize=16)
    def by_signature(signature: FileSignature, path: str) -> T:
        return load(path)

    @functools.wraps(load)
    def read(path: str | Path) -> T:
        return by_signature(file_signature(path), str(path))

    return read


def not_a_file(path: str | Path, what: str = "file") -> str | None:
    """Why `path` cannot be read as a file: a folder given where a file is meant, or nothing there; else None."""
    path = Path(path)
    if path.is_dir():
        return f"is a folder, not a {what}: name one of its files"
    return None if path.is_file() else f"{what} not found"


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line; raise DataError on anything else."""
    path = Path(path)
    problem = not_a_file(path)
    if problem:
        raise DataError(str(path), None, problem)
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                obj = _loads(line)
            except json.JSONDecodeError as exc:  # orjson's error subclasses it
                raise DataError(str(path), number, f"not valid JSON ({_json_problem(line, exc)})") from exc
            except UnicodeDecodeError as exc:
                raise DataError(str(path), number, "not valid UTF-8") from exc
            if not isinstance(obj, dict):
                raise DataError(str(path), number, f"expected a JSON object, got {type(obj).__name__}")
            yield number, obj


def _json_problem(line: bytes, exc: json.JSONDecodeError) -> str:
    """What is wrong and at which column (in characters). orjson reports a line cut inside a multi-byte
    character as "str is not valid UTF-8" at column 1; say where the bytes stop being text instead."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as bad:
        column = len(line[: bad.start].decode("utf-8")) + 1
        if bad.end >= len(line.rstrip(b"\r\n")):
            return f"the line ends inside a character at column {column}"
        return f"invalid UTF-8 byte at column {column}"
    return f"{exc.msg} at column {exc.colno}"
