"""The "koblex" weighting (not the paper's; `deepeval_weighting.py` is): the expected judge score under the token
probabilities at the place the score stands.

At the token where the reply's score starts (found inside the reply, not the first token equal to it as
DeepEval takes it), the top alternatives that spell an integer 0..10 are kept (merged over space markers), those
below `min_prob` (joint probability) dropped and the rest renormalised; the score is their expected value. A
"-" (or any other non-number) alternative carries no score mass. Unlike DeepEval, "11", "100" or "٨" is no
score either, and a score token merged with a space (" 7") is still weighted.

**"10" on digit-splitting tokenizers** (Qwen, Llama-2 ...): there the token "1" covers both 1 and 10.
- Sampled "1": P("0" | "1") is read from the next position's alternatives (exact), so P(10) = P("1")*P0 and
  P(1) = P("1")*(1-P0); if the number ended inside the sampled token or no position follows, P0 = 0.
- Otherwise, if an alternative is a multi-digit number (e.g. "10"), the vocabulary has multi-digit tokens and
  "1" is the score 1.
- Otherwise (approximation) the "1" mass goes to whichever endpoint, 1 or 10, is nearer the mean of the other
  valid alternatives (judge distributions are unimodal); with no other valid alternative it is 1.
The rule used is recorded as `ten_rule`.
"""

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from inspect_ai.model import Logprob

from koblex_tasks.scorers.koblex.lf_eval_parse import MAX_SCORE

TenRule = Literal["none", "observed", "multi_digit_vocab", "nearest_endpoint"]

_TOKEN_MARKERS = ("Ġ", "▁")
_DIGITS = re.compile(r"[0-9]+")
_ZERO_GLUED = re.compile(r"0(?![0-9])")


def clean_token(token: str) -> str:
    """A vocabulary piece as text: BPE/SentencePiece space markers and surrounding whitespace removed."""
    for marker in _TOKEN_MARKERS:
        token = token.replace(marker, "")
    return token.strip()


def _score_of(text: str) -> int | None:
    """The integer 0..10 a (cleaned) token spells exactly, e.g. "8" or "10"; not "08", "11", "-1" or "8."."""
    if _DIGITS.fullmatch(text) and str(int(text)) == text and int(text) <= MAX_SCORE:
        return int(text)
    return None


@dataclass(frozen=True)
class Position:
    """One generated token, its logprob and its top alternatives, as stored in the score metadata."""

    token: str
    logprob: float
    alternatives: tuple[tuple[str, float], ...]

    @classmethod
    def of(cls, lp: Logprob) -> "Position":
        return cls(lp.token, lp.logprob, tuple((t.token, t.logprob) for t in lp.top_logprobs or []))

    def as_dict(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "logprob": self.logprob,
            "top_logprobs": [list(a) for a in self.alternatives],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Position":
        alternatives = tuple((str(t), float(lp)) for t, lp in data.get("top_logprobs") or [])
        return cls(str(data["token"]), float(data["logprob"]), alternatives)

    def probabilities(self) -> dict[str, float]:
        """Alternative token -> probability, the sampled token included even when not among the alternatives."""
        probs = {token: math.exp(lp) for token, lp in self.alternatives}
        probs.setdefault(self.token, math.exp(self.logprob))
        return probs


@dataclass(frozen=True)
class ScoreDistribution:
    probs: dict[int, float]  # renormalised over the kept alternatives
    raw: dict[int, float]  # joint probabilities of every valid alternative, before `min_prob`
    dropped: dict[int, float]  # alternatives below `min_prob`
    ten_rule: TenRule
    token: str  # the sampled token at the score position

    @property
    def expected(self) -> float:
        return sum(score * p for score, p in self.probs.items())


def _core(token: str, prefix: str, suffix: str) -> str:
    """The part of an alternative standing where the sampled token's digits stand."""
    if prefix and token.startswith(prefix):
        token = token[len(prefix) :]
    if suffix and token.endswith(suffix):
        token = token[: -len(suffix)]
    return clean_token(token)


def _zero_continuation(position: Position) -> float:
    """P("0") at the position after a sampled "1": a "0" glued to it (no space marker) makes "10"."""
    return sum(p for token, p in position.probabilities().items() if _ZERO_GLUED.match(token))


def score_distribution(
    first: Position, following: Position | None, prefix: str = "", suffix: str = "", min_prob: float = 0.01
) -> ScoreDistribution | None:
    """Distribution over 0..10 at the score position, or None if no valid alternative has mass >= min_prob.

    `prefix`/`suffix`: the text of the sampled token before/after the score's digits (e.g. " " in " 8"),
    stripped from alternatives the same way.
    """
    raw: dict[int, float] = {}
    one_mass = 0.0
    multi_digit_vocab = False
    for token, p in first.probabilities().items():
        text = _core(token, prefix, suffix)
        if _DIGITS.fullmatch(text) and len(text) > 1:
            multi_digit_vocab = True
        score = _score_of(text)
        if score == 1:
            one_mass += p
        elif score is not None:
            raw[score] = raw.get(score, 0.0) + p

    rule: TenRule = "none"
    if one_mass > 0:
        if _core(first.token, prefix, suffix) == "1":
            rule = "observed"
            # the number ended inside the sampled token, or nothing follows it: no "0" can extend it
            p_zero = 0.0 if suffix or following is None else min(1.0, _zero_continuation(following))
            shares = {1: one_mass * (1.0 - p_zero), 10: one_mass * p_zero}
        elif multi_digit_vocab:
            rule = "multi_digit_vocab"
            shares = {1: one_mass}
        else:
            rule = "nearest_endpoint"
            other = sum(raw.values())
            mean = sum(s * p for s, p in raw.items()) / other if other > 0 else 1.0
            shares = {10 if mean > (1 + MAX_SCORE) / 2 else 1: one_mass}
        for score, p in shares.items():
            if p > 0:
                raw[score] = raw.get(score, 0.0) + p

    kept = {s: p for s, p in raw.items() if p >= min_prob}
    total = sum(kept.values())
    if total <= 0:
        return None
    return ScoreDistribution(
        probs={s: kept[s] / total for s in sorted(kept)},
        raw=dict(sorted(raw.items())),
        dropped={s: p for s, p in sorted(raw.items()) if s not in kept},
        ten_rule=rule,
        token=first.token,
    )
