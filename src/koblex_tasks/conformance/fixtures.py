"""Reading a folder of recorded official requests: `<method>_<backend>.jsonl` and `.retrieval.jsonl`.

The format (official_requests/README): a request file holds `call` lines (question_id, index_in_question,
stage, messages, params, reply), the script's `final_output` rows, and possibly a final `stopped` line (a
script that could not go on: only its recorded calls are compared). A retrieval file holds one line per BM25
call: query, k, `bm25_ids` / `bm25_scores` (0-based corpus lines) and, for a reranking method, the reranked
top ids and scores. Nothing here knows which questions or how many: any folder recorded the same way reads.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from koblex_tasks.errors import DataError
from koblex_tasks.jsonl import read_jsonl

_NAME = re.compile(r"^(?P<method>.+)_(?P<backend>vllm|openai)$")
RETRIEVAL_SUFFIX = ".retrieval.jsonl"


@dataclass(frozen=True)
class Call:
    """One recorded model call."""

    question_id: str
    index: int
    stage: str
    messages: list[dict[str, str]]
    params: dict[str, Any]
    reply: str


@dataclass(frozen=True)
class RetrievalList:
    """One BM25 call as the comparison reads it (ours or the official one): query, ids and scores, and the
    rerank when there was one."""

    query: str
    ids: list[int]
    scores: list[float]
    rerank_query: str | None = None
    reranked_ids: list[int] | None = None
    reranked_scores: list[float] | None = None


@dataclass(frozen=True, kw_only=True)
class Retrieval(RetrievalList):
    """One recorded official BM25 call: its question, its place among the question's calls, its depth."""

    question_id: str
    index: int
    k: int


@dataclass
class Fixture:
    """One `<method>_<backend>` recording: calls, result rows and retrieval lists by question, in order."""

    path: Path
    method: str
    backend: str
    model: str
    questions: list[str]  # in first-call order
    calls: dict[str, list[Call]]
    results: dict[str, dict[str, Any]]
    retrievals: dict[str, list[Retrieval]] = field(default_factory=dict)
    stopped: str | None = None  # why the script stopped, when it did (then the results are absent)

    @property
    def name(self) -> str:
        return f"{self.method}_{self.backend}"


def read_fixture(path: Path) -> Fixture:
    """One request file and its retrieval file (if present)."""
    match = _NAME.match(path.name.removesuffix(".jsonl"))
    if match is None:
        raise DataError(str(path), None, "not a <method>_<vllm|openai>.jsonl fixture")
    calls: dict[str, list[Call]] = {}
    results: dict[str, dict[str, Any]] = {}
    models: set[str] = set()
    stopped = None
    for _, row in read_jsonl(path):
        kind = row.get("type")
        if kind == "call":
            qid = str(row["question_id"])
            calls.setdefault(qid, []).append(
                Call(
                    qid,
                    int(row["index_in_question"]),
                    str(row.get("stage", "")),
                    row["messages"],
                    dict(row.get("params") or {}),
                    str(row.get("reply", "")),
                )
            )
            models.add(str(row.get("model", "")))
        elif kind == "final_output":
            results[str(row["question_id"])] = dict(row["row"])
        elif kind == "stopped":
            stopped = str(row.get("reason", "stopped"))
        else:
            raise DataError(str(path), None, f"unknown line type {kind!r}")
    for qid, qcalls in calls.items():
        qcalls.sort(key=lambda c: c.index)
        if [c.index for c in qcalls] != list(range(len(qcalls))):
            raise DataError(str(path), None, f"question {qid}: call indexes are not 0..{len(qcalls) - 1}")
    questions = list(calls) + [q for q in results if q not in calls]
    fixture = Fixture(
        path,
        match["method"],
        match["backend"],
        ",".join(sorted(models)),
        questions,
        calls,
        results,
        stopped=stopped,
    )
    retrieval_path = path.with_name(path.name.removesuffix(".jsonl") + RETRIEVAL_SUFFIX)
    if retrieval_path.is_file():
        fixture.retrievals = read_retrievals(retrieval_path)
    return fixture


def read_retrievals(path: Path) -> dict[str, list[Retrieval]]:
    by_question: dict[str, list[Retrieval]] = {}
    for _, row in read_jsonl(path):
        qid = str(row["question_id"])
        by_question.setdefault(qid, []).append(
            Retrieval(
                str(row["query"]),
                [int(i) for i in row["bm25_ids"]],
                [float(s) for s in row["bm25_scores"]],
                row.get("rerank_query"),
                row.get("reranked_top10_ids"),
                row.get("reranked_top10_scores"),
                question_id=qid,
                index=int(row.get("retrieval_index", 0)),
                k=int(row["k"]),
            )
        )
    for rows in by_question.values():
        rows.sort(key=lambda r: r.index)
    return by_question


def read_folder(folder: Path) -> list[Fixture]:
    """Every fixture in `folder`, by name; a folder without any is an error."""
    paths = sorted(
        p for p in folder.glob("*.jsonl") if not p.name.endswith(RETRIEVAL_SUFFIX) and _NAME.match(p.stem)
    )
    if not paths:
        raise DataError(str(folder), None, "no <method>_<vllm|openai>.jsonl fixtures")
    return [read_fixture(p) for p in paths]
