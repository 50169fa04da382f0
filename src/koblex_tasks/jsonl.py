"""Strict JSONL reading: every bad line is a DataError naming file and line, never a crash later on."""

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from koblex_tasks.errors import DataError

try:  # orjson parses several times faster (a 250K-paragraph corpus loads in ~1 s instead of ~2)
    import orjson

    _loads: Callable[[bytes], Any] = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency; stay correct without it
    _loads = json.loads


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line; raise DataError on anything else."""
    path = Path(path)
    if not path.is_file():
        raise DataError(str(path), None, "file not found")
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                obj = _loads(line)
            except json.JSONDecodeError as exc:  # orjson's error subclasses it
                raise DataError(
                    str(path), number, f"not valid JSON ({exc.msg} at column {exc.colno})"
                ) from exc
            except UnicodeDecodeError as exc:
                raise DataError(str(path), number, "not valid UTF-8") from exc
            if not isinstance(obj, dict):
                raise DataError(str(path), number, f"expected a JSON object, got {type(obj).__name__}")
            yield number, obj
