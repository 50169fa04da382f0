"""LEGIT response files (`{"doc_id", "response"}` per line, as the release's `results/reasoning_tasks_<model>.jsonl`)."""

from pathlib import Path

from koblex_tasks.errors import DataError
from koblex_tasks.jsonl import read_jsonl

RELEASE_PREFIX = "reasoning_tasks_"


def load_responses(path: str | Path) -> dict[str, str]:
    """doc_id -> response, strictly: each line needs string `doc_id` and `response`, doc_ids are unique."""
    where = str(path)
    out: dict[str, str] = {}
    lines: dict[str, int] = {}
    for line, obj in read_jsonl(path):
        doc_id, response = obj.get("doc_id"), obj.get("response")
        if not isinstance(doc_id, str) or not doc_id:
            raise DataError(where, line, "missing non-empty string field 'doc_id'")
        if not isinstance(response, str):
            raise DataError(where, line, f"field 'response' must be a string (doc {doc_id!r})")
        if doc_id in out:
            raise DataError(where, line, f"duplicate doc_id {doc_id!r} (first on line {lines[doc_id]})")
        out[doc_id] = response
        lines[doc_id] = line
    if not out:
        raise DataError(where, None, "no responses")
    return out


def infer_model_name(path: str | Path) -> str:
    """`reasoning_tasks_gpt-4.1.jsonl` -> `gpt-4.1`; `o3.jsonl` -> `o3`."""
    stem = Path(path).stem
    return stem[len(RELEASE_PREFIX) :] if stem.startswith(RELEASE_PREFIX) else stem
