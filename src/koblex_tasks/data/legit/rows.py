"""Reading LEGIT JSONL files whose rows are keyed by `doc_id` (test records, responses, verdicts), strictly."""

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from koblex_tasks.errors import DataError
from koblex_tasks.jsonl import read_jsonl

Row = TypeVar("Row")


def read_by_doc(
    path: str | Path, parse: Callable[[dict[str, Any], str, int], tuple[str, Row]], what: str
) -> dict[str, tuple[int, Row]]:
    """doc_id -> (line, parsed row), in file order. `parse(obj, where, line)` checks one row and returns its
    doc_id with the row; a repeated doc_id or a file without rows is a DataError naming file and line."""
    where = str(path)
    rows: dict[str, tuple[int, Row]] = {}
    for line, obj in read_jsonl(path):
        doc_id, row = parse(obj, where, line)
        if doc_id in rows:
            raise DataError(where, line, f"duplicate doc_id {doc_id!r} (first on line {rows[doc_id][0]})")
        rows[doc_id] = (line, row)
    if not rows:
        raise DataError(where, None, f"no {what}")
    return rows
