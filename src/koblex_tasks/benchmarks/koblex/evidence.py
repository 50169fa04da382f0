"""The record every solver leaves on the sample: the contract between solvers and scorers.

Scorers read only this (plus the sample's metadata and the model's completion), never solver internals, so a
new solver is scored correctly as soon as it fills `predicted`, sets `uses_retrieval` and says how its answer
is read out of its completion (`answer_rule`). The completion itself stays exactly as the model wrote it, so
`inspect score` and recovered samples of `inspect eval-retry` re-extract the same answer.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from inspect_ai.util import StoreModel
from pydantic import Field

AnswerKind = Literal["whole", "after_marker", "last_line_value"]


@dataclass(frozen=True)
class AnswerRule:
    """How a method's answer is read out of its final completion (its official extraction).

    1. Cut the completion at the earliest of `stops` (client-side stop sequences the provider may ignore);
       with `keep_stop` the stop sequence itself is kept (the released IRCoT/FLARE traces keep it).
    2. `after_marker`: for each of `markers` in turn, keep the text after its last occurrence (a marker that
       is absent keeps the text); `last_line_value`: the last line, after its first colon, without a final
       "."; `whole`: the text as it is.
    3. Strip surrounding whitespace.

    `whole` is the default: a released answer (replay) or a solver that records no rule is scored as written.
    """

    kind: AnswerKind = "whole"
    markers: tuple[str, ...] = ()
    stops: tuple[str, ...] = ()
    keep_stop: bool = False

    def apply(self, completion: str) -> str:
        """The answer this rule reads out of `completion` (a pure function of the two)."""
        text = cut_at_stop(completion, self.stops, keep=self.keep_stop)
        if self.kind == "after_marker":
            for marker in self.markers:
                text = after_marker(text, marker)
        elif self.kind == "last_line_value":
            text = text.strip().split("\n")[-1].split(":", 1)[-1].strip().rstrip(".")
        return text.strip()

    def as_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {"kind": self.kind, "markers": list(self.markers), "stops": list(self.stops)}
        if self.keep_stop:  # absent when false: older logs' rules read the same
            record["keep_stop"] = True
        return record

    @classmethod
    def from_dict(cls, data: Any) -> "AnswerRule":
        """The rule recorded in a store (a dict, as in a log); missing or empty = `whole`."""
        if not isinstance(data, dict) or not data:
            return cls()
        kind = data.get("kind", "whole")
        if kind not in ("whole", "after_marker", "last_line_value"):
            raise ValueError(f"unknown answer rule kind {kind!r}")
        return cls(
            kind,
            tuple(data.get("markers") or ()),
            tuple(data.get("stops") or ()),
            bool(data.get("keep_stop", False)),
        )


def cut_at_stop(text: str, stops: Sequence[str] | None, keep: bool = False) -> str:
    """The text before the earliest stop sequence (providers may ignore or cap `stop_seqs`); `keep`: up to
    and including it (the earliest-starting one; the longest of those that start there)."""
    found = [(i, -len(s)) for s in stops or () if (i := text.find(s)) >= 0]
    if not found:
        return text
    at, minus_length = min(found)
    return text[: at - minus_length] if keep else text[:at]


def after_marker(text: str, marker: str = "Answer:") -> str:
    """The text after the last `marker` (the official extraction), or all of it if absent; stripped."""
    return text.split(marker)[-1].strip()


OFFICIAL_ANSWER = AnswerRule("after_marker", ("Answer:",))  # the official scripts: after the last "Answer:"


class ProvisionEvidence(StoreModel):
    """What a method retrieved and which provisions it finally relied on (visible in `inspect view`)."""

    method: str = ""
    uses_retrieval: bool = False
    queries: list[str] = Field(default_factory=list)
    retrieved: list[list[str]] = Field(default_factory=list)  # per query, provision keys in rank order
    # The retrieval funnel (ParSeR; empty where a method does not record it): per query, the first stage's
    # top-k keys (BM25, or the dense/hybrid retriever) and the top-l keys after reranking, both in rank order;
    # `guesses` are the parametric provisions the model wrote (whether or not they were sent as queries).
    # `staged` says the two stage lists were recorded (a method that made no query records none).
    staged: bool = False
    first_stage: list[list[str]] = Field(default_factory=list)
    reranked: list[list[str]] = Field(default_factory=list)
    guesses: list[str] = Field(default_factory=list)
    predicted: list[str] = Field(default_factory=list)  # provisions the method outputs (scored as a set)
    counters: dict[str, int] = Field(default_factory=dict)  # fallbacks and other events worth counting
    answer_rule: dict[str, Any] = Field(default_factory=dict)  # AnswerRule.as_dict(); empty = "whole"

    def count(self, name: str, by: int = 1) -> None:
        counters = dict(self.counters)
        counters[name] = counters.get(name, 0) + by
        self.counters = counters

    @property
    def rule(self) -> AnswerRule:
        return AnswerRule.from_dict(self.answer_rule)
