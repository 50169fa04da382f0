"""LEGIT response files (`{"doc_id", "response"}` per line, as the release's `results/reasoning_tasks_<model>.jsonl`)."""

from pathlib import Path
from typing import Any

from koblex_tasks.data.legit.rows import read_by_doc
from koblex_tasks.errors import DataError
from koblex_tasks.jsonl import read_once

RELEASE_PREFIX = "reasoning_tasks_"


def response_fields(obj: dict[str, Any], where: str, line: int) -> tuple[str, str]:
    """(doc_id, response) of one released row, both checked (every LEGIT release file has them)."""
    doc_id, response = obj.get("doc_id"), obj.get("response")
    if not isinstance(doc_id, str) or not doc_id:
        raise DataError(where, line, "missing non-empty string field 'doc_id'")
    if not isinstance(response, str):
        raise DataError(where, line, f"field 'response' must be a string (doc {doc_id!r})")
    return doc_id, response


@read_once
def load_responses(path: str | Path) -> dict[str, str]:
    """doc_id -> response, strictly: each line needs string `doc_id` and `response`, doc_ids are unique.

    Read once per process for an unchanged file (the task's check and the replay solver share it)."""

    rows = read_by_doc(path, response_fields, "responses")
    return {doc_id: response for doc_id, (_, response) in rows.items()}


def infer_model_name(path: str | Path) -> str:
    """`reasoning_tasks_gpt-4.1.jsonl` -> `gpt-4.1`; `o3.jsonl` -> `o3`."""
    stem = Path(path).stem
    return stem[len(RELEASE_PREFIX) :] if stem.startswith(RELEASE_PREFIX) else stem
