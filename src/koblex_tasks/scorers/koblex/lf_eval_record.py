"""The LF-Eval judge record kept in the score metadata, and the one function that turns it into the value.

The scorer stores what the judge returned (`replies`; in logprobs mode also `reply_tokens`, the reply as
decoded tokens, and `score_positions`, the logprobs at the score's token and the one after it) and computes
the value with `derive` from that record alone. The leaderboard calls the same `derive` on a log's metadata,
so a stored value that does not follow from its record is caught without calling the judge.

Record keys: `prompt_variant` ("deepeval" | "bare"), `mode` ("logprobs" | "sampled"), `min_prob`,
`replies`, and in logprobs mode `reply_tokens` and `score_positions` (each `{index, token, logprob,
top_logprobs: [[token, logprob], ...]}`).
"""

import codecs
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from inspect_ai.model import Logprob

from koblex_tasks.scorers.koblex.lf_eval_parse import VARIANTS, Variant, locate_score, parse_score
from koblex_tasks.scorers.koblex.lf_eval_weights import Position, score_distribution

_DIGITS = re.compile(r"[0-9]+")
_MARKERS = {"Ġ": " ", "▁": " ", "Ċ": "\n"}


def _token_bytes(lp: Logprob) -> bytes:
    if lp.bytes:
        return bytes(lp.bytes)
    token = lp.token
    for marker, text in _MARKERS.items():
        token = token.replace(marker, text)
    return token.encode("utf-8")


def reply_pieces(content: Sequence[Logprob]) -> list[str]:
    """The reply as per-token text: bytes decoded across token boundaries (a Hangul syllable split over two
    tokens lands in the second), so "".join(pieces) is the reply and each piece starts where its token does."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pieces = [decoder.decode(_token_bytes(lp)) for lp in content]
    tail = decoder.decode(b"", final=True)
    if tail and pieces:
        pieces[-1] += tail
    return pieces


def token_at(pieces: Sequence[str], offset: int) -> tuple[int, int] | None:
    """(index, start offset) of the token whose text covers character `offset`."""
    start = 0
    for index, piece in enumerate(pieces):
        if start <= offset < start + len(piece):
            return index, start
        start += len(piece)
    return None


def logprobs_record(variant: Variant, content: Sequence[Logprob]) -> dict[str, Any]:
    """`reply_tokens` and the `score_positions` (the score's token and the next) of a reply with logprobs."""
    pieces = reply_pieces(content)
    positions: list[dict[str, Any]] = []
    span = locate_score(variant, "".join(pieces))
    at = token_at(pieces, span.start) if span is not None else None
    if at is not None:
        index = at[0]
        positions = [
            {"index": i, **Position.of(content[i]).as_dict()} for i in (index, index + 1) if i < len(content)
        ]
    return {"reply_tokens": pieces, "score_positions": positions}


@dataclass(frozen=True)
class Derivation:
    """The value a record yields (0-100, None = unscored), why, and the details shown in the metadata."""

    value: float | None
    explanation: str
    details: dict[str, Any] = field(default_factory=dict)


def _unscored(explanation: str, **details: Any) -> Derivation:
    return Derivation(None, explanation, details)


def _shown(probs: Mapping[int, float]) -> dict[str, float]:
    return {str(s): p for s, p in probs.items()}


def _from_logprobs(variant: Variant, record: Mapping[str, Any], min_prob: float) -> Derivation:
    pieces = [str(p) for p in record["reply_tokens"]]
    text = "".join(pieces)
    span = locate_score(variant, text)
    if span is None:
        return _unscored("no score in the judge's reply")
    score = span.score
    if score is None:
        return _unscored(f"the judge's score {span.value!r} is not an integer 0-10", reply_score=span.value)
    index, token_start = cast(tuple[int, int], token_at(pieces, span.start))  # span.start is inside text
    token_end = token_start + len(pieces[index])
    digits_end = min(cast(re.Match[str], _DIGITS.match(text, span.start)).end(), token_end)
    positions = {int(p["index"]): Position.from_dict(p) for p in record.get("score_positions") or []}
    first = positions.get(index)
    dist = (
        score_distribution(
            first,
            positions.get(index + 1),
            text[token_start : span.start],
            text[digits_end:token_end],
            min_prob,
        )
        if first is not None
        else None
    )
    if dist is None:  # DeepEval too falls back to the reply's own integer when the weighting fails
        details = {"reply_score": score, "weighting": "reply_integer", "expected_score": float(score)}
        return Derivation(
            score * 10.0,
            f"judge score {score}/10 (no valid alternative with probability >= {min_prob} at the score token)",
            details | {"distribution": {str(score): 1.0}},
        )
    ev = dist.expected
    shown = ", ".join(f"P({s})={p:.3f}" for s, p in dist.probs.items())
    return Derivation(
        ev * 10,
        f"expected judge score {ev:.3f}/10 from {shown}",
        {
            "reply_score": score,
            "weighting": "logprobs",
            "expected_score": ev,
            "distribution": _shown(dist.probs),
            "raw_distribution": _shown(dist.raw),
            "dropped": _shown(dist.dropped),
            "ten_rule": dist.ten_rule,
            "score_token": dist.token,
        },
    )


def _from_samples(variant: Variant, replies: Sequence[str]) -> Derivation:
    parsed = [parse_score(r, variant) for r in replies]
    valid = [p for p in parsed if p is not None]
    if not valid:
        return _unscored(
            f"none of the {len(replies)} sampled judge replies holds an integer score 0-10",
            sampled_scores=parsed,
        )
    ev = sum(valid) / len(valid)
    return Derivation(
        ev * 10,
        f"mean of {len(valid)}/{len(replies)} sampled judge scores: {ev:.3f}/10",
        {
            "sampled_scores": parsed,
            "expected_score": ev,
            "distribution": {str(s): valid.count(s) / len(valid) for s in sorted(set(valid))},
        },
    )


def derive(record: Mapping[str, Any]) -> Derivation:
    """The LF-Eval value (0-100) of a judge record; unscored (None) when the record holds no valid score.

    Raises KeyError/TypeError/ValueError on a record that is not of the documented shape.
    """
    variant = record["prompt_variant"]
    if variant not in VARIANTS:
        raise ValueError(f"unknown LF-Eval prompt variant {variant!r}")
    mode = record["mode"]
    if mode == "logprobs":
        return _from_logprobs(variant, record, float(record["min_prob"]))
    if mode == "sampled":
        return _from_samples(variant, [str(r) for r in record["replies"]])
    raise ValueError(f"unknown LF-Eval mode {mode!r}")
