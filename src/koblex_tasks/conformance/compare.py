"""Comparing what our solver sent and returned with what the official scripts did, question by question.

A request is compared as the official call recorded it: the messages (role and content, byte for byte) and
every sampling parameter (`PARAMS`), a parameter set by one side only being a difference. Our side is the
HTTP body the server received, read the way the serving backend reads it: for vLLM, `logprobs` is
SamplingParams' count (`top_logprobs` when logprobs are asked) and `enable_thinking` the chat-template
argument; for OpenAI, `logprobs` is the flag. Results compare the answer (and provisions, where the scripts
write them); retrieval lists compare ids and scores at float32 precision.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from koblex_tasks.conformance.fixtures import Call, Fixture, Retrieval, RetrievalList

PARAMS = ("temperature", "top_p", "max_tokens", "seed", "logprobs", "stop", "enable_thinking", "n")
ABSENT = "<absent>"


@dataclass(frozen=True)
class Difference:
    question: str
    call: int | str  # the call's index in its question, or what was compared ("result", "retrieval 2")
    field: str
    official: Any
    ours: Any

    def describe(self) -> str:
        return (
            f"question {self.question}, {self._where()}, field {self.field}: "
            f"official {_show(self.official)} / ours {_show(self.ours)}"
        )

    def _where(self) -> str:
        return f"call {self.call}" if isinstance(self.call, int) else str(self.call)


@dataclass
class Tally:
    identical: int = 0
    total: int = 0
    differences: list[Difference] = field(default_factory=list)

    def add(self, differences: Sequence[Difference]) -> None:
        self.total += 1
        self.identical += not differences
        self.differences.extend(differences)

    def line(self, what: str) -> str:
        return f"{what} identical {self.identical}/{self.total}"


@dataclass
class FileReport:
    """One fixture file's comparison."""

    name: str
    calls: Tally = field(default_factory=Tally)
    results: Tally = field(default_factory=Tally)
    retrieval: Tally = field(default_factory=Tally)
    error: str | None = None
    version: str | None = None  # the script version compared with, where a method has several

    @property
    def ok(self) -> bool:
        return self.error is None and not self.first_difference

    @property
    def first_difference(self) -> Difference | None:
        for tally in (self.calls, self.results, self.retrieval):
            if tally.differences:
                return tally.differences[0]
        return None

    def summary(self) -> str:
        name = self.name if self.version is None else f"{self.name} ({self.version} scripts)"
        head = f"{name}: " + ", ".join(
            (self.calls.line("calls"), self.results.line("results"), self.retrieval.line("retrieval"))
        )
        if self.error:
            return f"{head}\n  error: {self.error}"
        first = self.first_difference
        return head if first is None else f"{head}\n  first difference: {first.describe()}"


def _show(value: Any, width: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= width else f"{text[: width - 20]}...{text[-17:]} ({len(text)} chars)"


def sent_params(body: dict[str, Any], backend: str) -> dict[str, Any]:
    """The sampling parameters of a request body as the backend applies them (absent keys left out)."""
    params: dict[str, Any] = {}
    for name in ("temperature", "top_p", "seed", "n"):
        if body.get(name) is not None:
            params[name] = body[name]
    max_tokens = body.get("max_tokens", body.get("max_completion_tokens"))
    if max_tokens is not None:
        params["max_tokens"] = max_tokens
    stop = body.get("stop")
    if stop:
        params["stop"] = [stop] if isinstance(stop, str) else list(stop)
    if body.get("logprobs"):
        params["logprobs"] = int(body.get("top_logprobs") or 0) if backend == "vllm" else True
        if backend != "vllm" and body.get("top_logprobs") is not None:
            params["top_logprobs"] = body["top_logprobs"]
    kwargs = body.get("chat_template_kwargs")
    if isinstance(kwargs, dict) and "enable_thinking" in kwargs:
        params["enable_thinking"] = kwargs["enable_thinking"]
    return params


def compare_call(official: Call, body: dict[str, Any] | None, backend: str) -> list[Difference]:
    """Messages first (the first message or field that differs), then every parameter."""
    if body is None:
        return [Difference(official.question_id, official.index, "call", "sent", "not sent")]
    where = (official.question_id, official.index)
    ours_messages = [{"role": m.get("role"), "content": m.get("content")} for m in body.get("messages", [])]
    diffs: list[Difference] = []
    if len(ours_messages) != len(official.messages):
        diffs.append(
            Difference(
                *where,
                "messages (roles)",
                [m["role"] for m in official.messages],
                [m["role"] for m in ours_messages],
            )
        )
    else:
        for i, (theirs, ours) in enumerate(zip(official.messages, ours_messages, strict=True)):
            for key in ("role", "content"):
                if theirs.get(key) != ours.get(key):
                    diffs.append(
                        Difference(
                            *where, f"messages[{i}].{key}", *_first_divergence(theirs.get(key), ours.get(key))
                        )
                    )
    ours_params = sent_params(body, backend)
    for name in sorted(set(official.params) | set(ours_params), key=_param_order):
        theirs_value, ours_value = official.params.get(name, ABSENT), ours_params.get(name, ABSENT)
        if not _same(theirs_value, ours_value):
            diffs.append(Difference(*where, f"params.{name}", theirs_value, ours_value))
    return diffs


def _param_order(name: str) -> tuple[int, str]:
    return (PARAMS.index(name) if name in PARAMS else len(PARAMS), name)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return bool(a == b)


def _first_divergence(theirs: Any, ours: Any, context: int = 40) -> tuple[Any, Any]:
    """For two strings, the stretch around where they first differ (with its offset); else both whole."""
    if not (isinstance(theirs, str) and isinstance(ours, str)):
        return theirs, ours
    at = next(
        (i for i, (a, b) in enumerate(zip(theirs, ours, strict=False)) if a != b), min(len(theirs), len(ours))
    )
    start = max(0, at - context)
    return (f"@{at}: {theirs[start : at + context]!r}", f"@{at}: {ours[start : at + context]!r}")


def compare_calls(
    question: str, official: list[Call], bodies: list[dict[str, Any] | None], backend: str, stopped: bool
) -> tuple[list[list[Difference]], list[Difference]]:
    """Per official call its differences; plus calls we made that the script did not (unless it stopped)."""
    per_call = [
        compare_call(call, bodies[i] if i < len(bodies) else None, backend) for i, call in enumerate(official)
    ]
    extra: list[Difference] = []
    if not stopped and len(bodies) > len(official):
        extra.append(
            Difference(question, len(official), "call", "not sent", f"{len(bodies) - len(official)} more")
        )
    return per_call, extra


def compare_result(
    question: str, row: dict[str, Any], answer: str, provisions: list[str] | None
) -> list[Difference]:
    diffs = []
    if "answer" in row and row["answer"] != answer:
        diffs.append(Difference(question, "result", "answer", row["answer"], answer))
    if "provisions" in row and list(row["provisions"]) != list(provisions or []):
        diffs.append(Difference(question, "result", "provisions", row["provisions"], provisions))
    return diffs


OurRetrieval = RetrievalList  # one of our BM25 calls, in the official record's shape


def _f32(values: Sequence[float] | None) -> list[float] | None:
    return None if values is None else [float(v) for v in np.asarray(values, dtype=np.float32)]


def compare_retrieval(official: Retrieval, ours: OurRetrieval | None) -> list[Difference]:
    where = (official.question_id, f"retrieval {official.index}")
    if ours is None:
        return [Difference(*where, "retrieval", "made", "not made")]
    pairs: list[tuple[str, Any, Any]] = [
        ("query", official.query, ours.query),
        ("bm25_ids", official.ids, ours.ids),
        ("bm25_scores", _f32(official.scores), _f32(ours.scores)),
    ]
    if official.reranked_ids is not None:
        pairs += [
            ("rerank_query", official.rerank_query, ours.rerank_query),
            ("reranked_ids", official.reranked_ids, ours.reranked_ids),
            ("reranked_scores", _f32(official.reranked_scores), _f32(ours.reranked_scores)),
        ]
    return [Difference(*where, name, a, b) for name, a, b in pairs if a != b]


def compare_fixture_question(
    report: FileReport,
    fixture: Fixture,
    question: str,
    bodies: list[dict[str, Any] | None],
    answer: str | None,
    provisions: list[str] | None,
    retrievals: list[OurRetrieval],
) -> None:
    """Add one question's calls, result and retrieval lists to the file's report."""
    per_call, extra = compare_calls(
        question, fixture.calls.get(question, []), bodies, fixture.backend, fixture.stopped is not None
    )
    for diffs in per_call:
        report.calls.add(diffs)
    report.calls.differences.extend(extra)
    if question in fixture.results:
        row = fixture.results[question]
        report.results.add(compare_result(question, row, answer or "", provisions))
    for i, official in enumerate(fixture.retrievals.get(question, [])):
        report.retrieval.add(compare_retrieval(official, retrievals[i] if i < len(retrievals) else None))
    if len(retrievals) > len(fixture.retrievals.get(question, [])) and fixture.retrievals:
        report.retrieval.differences.append(
            Difference(
                question, "retrieval", "count", len(fixture.retrievals.get(question, [])), len(retrievals)
            )
        )
