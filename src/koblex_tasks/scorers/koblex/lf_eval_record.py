"""The LF-Eval judge record kept in the score metadata, and the one function that turns it into the value.

The scorer stores what the judge returned (`replies`; in logprobs mode also `tokens`, the generated tokens as
the provider named them, `reply_tokens`, the reply as decoded per-token text, and `score_positions`, the
logprobs at the tokens a weighting reads) and computes the value with `derive` from that record and the
`Rules` alone. The leaderboard calls the same `derive` with the spec's rules on a log's metadata, so a stored
value that does not follow from its record is caught without calling the judge.

Two weightings (`Rules.weighting`), both unscored when our strict parse finds no integer 0-10 where the prompt
asks for the score (the failure rate the leaderboard reports):
- "deepeval" (the paper's): DeepEval GEval's number, case for case (`deepeval_weighting.py`);
- "koblex": the alternatives at the token where the score stands, "10" split on digit-splitting tokenizers,
  alternatives under `min_prob` dropped (`lf_eval_weights.py`).

Record keys: `prompt_variant` ("deepeval" | "bare"), `weighting`, `mode` ("logprobs" | "raw": one reply
without logprobs, scored by its integer | "sampled": the non-paper mean of several replies), `min_prob`,
`scale`, `replies`, and in logprobs mode `tokens`, `reply_tokens` and `score_positions` (each `{index, token,
logprob, top_logprobs: [[token, logprob], ...]}`).
"""

import codecs
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from inspect_ai.model import Logprob, Logprobs, TopLogprob

from koblex_tasks.benchmarks.koblex.spec import LF_EVAL_MIN_PROB, LF_EVAL_SCALE
from koblex_tasks.scorers.koblex.deepeval_weighting import (
    DeepEvalReplyError,
    deepeval_reply_score,
    geval_score,
    score_token_index,
)
from koblex_tasks.scorers.koblex.lf_eval_parse import VARIANTS, ScoreSpan, Variant, locate_score, parse_score
from koblex_tasks.scorers.koblex.lf_eval_weights import Position, score_distribution

Weighting = Literal["deepeval", "koblex"]
Mode = Literal["logprobs", "raw", "sampled"]

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


def _deepeval_index(reply: str, content: Sequence[Logprob]) -> int | None:
    """The token DeepEval weights (the first equal to the reply's `str(score)`), None if it reads none."""
    try:
        return score_token_index(deepeval_reply_score(reply), Logprobs(content=list(content)))
    except DeepEvalReplyError:
        return None


def logprobs_record(variant: Variant, content: Sequence[Logprob], reply: str) -> dict[str, Any]:
    """`tokens`, `reply_tokens` and the `score_positions` of a reply with logprobs: the token where the score
    stands and the next (the "koblex" weighting) and the token DeepEval weights, when it reads one."""
    pieces = reply_pieces(content)
    indexes: set[int] = set()
    span = locate_score(variant, "".join(pieces))
    at = token_at(pieces, span.start) if span is not None else None
    if at is not None:
        indexes |= {at[0], at[0] + 1}
    deepeval_index = _deepeval_index(reply, content)
    if deepeval_index is not None:
        indexes.add(deepeval_index)
    positions = [
        {"index": i, **Position.of(content[i]).as_dict()} for i in sorted(indexes) if i < len(content)
    ]
    return {"tokens": [lp.token for lp in content], "reply_tokens": pieces, "score_positions": positions}


def _positions(record: Mapping[str, Any]) -> dict[int, Position]:
    return {int(p["index"]): Position.from_dict(p) for p in record.get("score_positions") or []}


def recorded_logprobs(record: Mapping[str, Any]) -> Logprobs:
    """The judge's logprobs as far as the record keeps them: every token, alternatives at the kept positions."""
    positions = _positions(record)
    content = []
    for i, token in enumerate(record["tokens"]):
        kept = positions.get(i)
        alternatives = (
            [TopLogprob(token=t, logprob=lp) for t, lp in kept.alternatives] if kept is not None else None
        )
        content.append(
            Logprob(token=str(token), logprob=kept.logprob if kept else 0.0, top_logprobs=alternatives)
        )
    return Logprobs(content=content)


@dataclass(frozen=True)
class Rules:
    """How a record becomes a value: the weighting, the alternatives' cut ("koblex") and the 0-10 scale's
    factor. The scorer passes its arguments; a re-derivation the spec's values, never the log's."""

    weighting: Weighting
    min_prob: float = LF_EVAL_MIN_PROB
    scale: int = LF_EVAL_SCALE


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


def _strict(variant: Variant, text: str) -> int | Derivation:
    """Our strict parse: the integer 0-10 where the prompt asks for the score, else the unscored derivation."""
    span = locate_score(variant, text)
    if span is None:
        return _unscored("no score in the judge's reply")
    if span.score is None:
        return _unscored(f"the judge's score {span.value!r} is not an integer 0-10", reply_score=span.value)
    return span.score


def _from_logprobs(variant: Variant, record: Mapping[str, Any], rules: Rules) -> Derivation:
    """The "koblex" weighting: the alternatives at the token where the score stands."""
    pieces = [str(p) for p in record["reply_tokens"]]
    text = "".join(pieces)
    score = _strict(variant, text)
    if isinstance(score, Derivation):
        return score
    span = cast(ScoreSpan, locate_score(variant, text))
    index, token_start = cast(tuple[int, int], token_at(pieces, span.start))  # span.start is inside text
    token_end = token_start + len(pieces[index])
    digits_end = min(cast(re.Match[str], _DIGITS.match(text, span.start)).end(), token_end)
    positions = _positions(record)
    first = positions.get(index)
    dist = (
        score_distribution(
            first,
            positions.get(index + 1),
            text[token_start : span.start],
            text[digits_end:token_end],
            rules.min_prob,
        )
        if first is not None
        else None
    )
    if dist is None:  # as DeepEval does, the reply's own integer when the weighting fails
        details = {"reply_score": score, "weighted_by": "reply_integer", "expected_score": float(score)}
        return Derivation(
            score * float(rules.scale),
            f"judge score {score}/10 (no valid alternative with probability >= {rules.min_prob} at the score "
            "token)",
            details | {"distribution": {str(score): 1.0}},
        )
    ev = dist.expected
    shown = ", ".join(f"P({s})={p:.3f}" for s, p in dist.probs.items())
    return Derivation(
        ev * rules.scale,
        f"expected judge score {ev:.3f}/10 from {shown}",
        {
            "reply_score": score,
            "weighted_by": "logprobs",
            "expected_score": ev,
            "distribution": _shown(dist.probs),
            "raw_distribution": _shown(dist.raw),
            "dropped": _shown(dist.dropped),
            "ten_rule": dist.ten_rule,
            "score_token": dist.token,
        },
    )


def _from_raw(variant: Variant, reply: str, rules: Rules) -> Derivation:
    """One reply without logprobs ("koblex"): its integer."""
    score = _strict(variant, reply)
    if isinstance(score, Derivation):
        return score
    return Derivation(
        score * float(rules.scale),
        f"judge score {score}/10 (no logprobs)",
        {"reply_score": score, "weighted_by": "reply_integer", "expected_score": float(score)},
    )


def _deepeval(variant: Variant, record: Mapping[str, Any], rules: Rules) -> Derivation:
    """The "deepeval" weighting: GEval's number, where our strict parse finds a valid score."""
    reply = str(record["replies"][0])
    logprobs = recorded_logprobs(record) if record["mode"] == "logprobs" else None
    strict = _strict(variant, reply)
    try:
        geval = geval_score(reply, logprobs)
    except DeepEvalReplyError as exc:
        if isinstance(strict, Derivation):
            return strict
        return _unscored(f"{exc}: the paper's protocol gives it no score", reply_score=strict)
    path = "weighted" if geval.index is not None else "raw_fallback"
    details = {
        "reply_score": geval.raw_score,
        "expected_score": geval.g_score,
        "deepeval_path": path,
        "deepeval_token_index": geval.index,
    }
    if isinstance(strict, Derivation):
        shown = f"{strict.explanation} (DeepEval would report {geval.score:.4f})"
        return Derivation(None, shown, strict.details | {"deepeval_score": geval.score})
    how = (
        f"DeepEval's weighted score at token {geval.index}"
        if geval.index is not None
        else f"DeepEval's fallback to the raw score (no usable token equals {str(geval.raw_score)!r})"
    )
    return Derivation(geval.g_score * rules.scale, f"{how}: {geval.g_score:.3f}/10", details)


def _from_samples(variant: Variant, replies: Sequence[str], rules: Rules) -> Derivation:
    parsed = [parse_score(r, variant) for r in replies]
    valid = [p for p in parsed if p is not None]
    if not valid:
        return _unscored(
            f"none of the {len(replies)} sampled judge replies holds an integer score 0-10",
            sampled_scores=parsed,
        )
    ev = sum(valid) / len(valid)
    return Derivation(
        ev * rules.scale,
        f"mean of {len(valid)}/{len(replies)} sampled judge scores: {ev:.3f}/10",
        {
            "sampled_scores": parsed,
            "expected_score": ev,
            "distribution": {str(s): valid.count(s) / len(valid) for s in sorted(set(valid))},
        },
    )


def derive(record: Mapping[str, Any], rules: Rules) -> Derivation:
    """The LF-Eval value (0-100) of a judge record under `rules`; unscored (None) when our strict parse finds
    no valid score, or DeepEval cannot read the reply under the "deepeval" weighting.

    Raises KeyError/TypeError/ValueError on a record that is not of the documented shape.
    """
    variant = record["prompt_variant"]
    if variant not in VARIANTS:
        raise ValueError(f"unknown LF-Eval prompt variant {variant!r}")
    mode = record["mode"]
    if mode == "sampled":
        return _from_samples(variant, [str(r) for r in record["replies"]], rules)
    if mode not in ("logprobs", "raw"):
        raise ValueError(f"unknown LF-Eval mode {mode!r}")
    if rules.weighting == "deepeval":
        return _deepeval(variant, record, rules)
    if rules.weighting == "koblex":
        if mode == "logprobs":
            return _from_logprobs(variant, record, rules)
        return _from_raw(variant, str(record["replies"][0]), rules)
    raise ValueError(f"unknown LF-Eval weighting {rules.weighting!r}")
