"""DeepEval GEval's score of one judge reply, case for case: the number the paper's LF-Eval averaged.

Reimplemented from DeepEval 3.1.9-3.3.5 (`metrics/g_eval/utils.py: calculate_weighted_summed_score`,
`GEval._evaluate`, `metrics/utils.py: trimAndLoadJson`; the code is identical across these releases), so a
reply our stricter parse reads differently still gets the paper's number:

- the reply's JSON is the text from its first "{" to its last "}" (a "}" appended when there is none), with
  a comma before "}" or "]" removed, read by `json.loads`; it must hold `reason` and `score`;
- the weighted score is taken at the FIRST generated token equal to `str(score)`: that token's alternatives
  that are `str.isdecimal()` (so "11" and "٨" count, " 7" and "-" do not) with probability >= 1%, each
  alternative on its own before merging, summed per integer and renormalised;
- when no token equals the score (e.g. " 7" as one token), no alternative survives, or anything raises,
  the reply's own score is used; a judge without logprobs is the same one call and its raw score;
- GEval reports that 0-10 number divided by 10.
"""

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import Logprobs

from koblex_tasks.benchmarks.koblex.spec import LF_EVAL_MIN_PROB

__all__ = [
    "DeepEvalReplyError",
    "GEvalScore",
    "deepeval_reply_score",
    "deepeval_weighted_score",
    "geval_score",
    "score_token_index",
]

# DeepEval compares logprobs with math.log(0.01), not probabilities with 0.01: the same comparison here keeps
# an alternative at exactly 1% on the same side.
MIN_LOGPROB = math.log(LF_EVAL_MIN_PROB)
GEVAL_SCALE = 10
_TRAILING_COMMA = re.compile(r",\s*([\]}])")


class DeepEvalReplyError(ValueError):
    """A reply DeepEval cannot read (no JSON object, or no `reason`/`score`): GEval errors on that test case."""


def deepeval_reply_score(reply: str) -> Any:
    """The `score` value of the reply as DeepEval's `trimAndLoadJson` reads it (any JSON type)."""
    start = reply.find("{")
    end = reply.rfind("}") + 1
    if end == 0 and start != -1:
        reply += "}"
        end = len(reply)
    text = reply[start:end] if start != -1 and end != 0 else ""
    try:
        data = json.loads(_TRAILING_COMMA.sub(r"\1", text))
        data["reason"]  # GEval reads the reason first: a reply without one errors
        return data["score"]
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise DeepEvalReplyError(
            f"DeepEval cannot read the judge reply ({type(exc).__name__}: {exc})"
        ) from exc


@dataclass(frozen=True)
class GEvalScore:
    """GEval's 0-10 `g_score` of a reply, the raw `score` it holds, and the token index the weighting used
    (None: GEval fell back to the raw score)."""

    g_score: float
    raw_score: Any
    index: int | None

    @property
    def score(self) -> float:
        return self.g_score / GEVAL_SCALE


def score_token_index(raw_score: Any, logprobs: Logprobs) -> int | None:
    """The first generated token equal to `str(score)`, as DeepEval looks for it (not the score's place)."""
    target = str(raw_score)
    return next((i for i, lp in enumerate(logprobs.content) if lp.token == target), None)


def _weighted(raw_score: Any, logprobs: Logprobs) -> tuple[float, int] | None:
    """The probability-weighted score and its token index, or None (GEval then falls back to the raw score)."""
    index = score_token_index(raw_score, logprobs)
    if index is None or not logprobs.content[index].top_logprobs:
        return None
    mass: dict[int, float] = {}
    for alternative in logprobs.content[index].top_logprobs or []:
        if alternative.logprob < MIN_LOGPROB or not alternative.token.isdecimal():
            continue
        score = int(alternative.token)
        mass[score] = mass.get(score, 0.0) + math.exp(alternative.logprob)
    total = sum(mass.values())
    if total == 0:
        return None
    return sum(score * p for score, p in mass.items()) / total, index


def geval_score(reply: str, logprobs: Logprobs | None) -> GEvalScore:
    """GEval's score of `reply`: weighted when it can be, else the raw score. Raises DeepEvalReplyError."""
    raw_score = deepeval_reply_score(reply)
    weighted: tuple[float, int] | None = None
    if logprobs is not None:
        try:
            weighted = _weighted(raw_score, logprobs)
        except Exception:  # GEval's bare `except:` around the weighting: any failure falls back
            weighted = None
    if weighted is not None:
        return GEvalScore(weighted[0], raw_score, weighted[1])
    try:
        return GEvalScore(float(raw_score), raw_score, None)
    except (TypeError, ValueError) as exc:  # GEval's float(g_score) fails: the test case errors
        raise DeepEvalReplyError(f"DeepEval cannot use the score {raw_score!r}") from exc


def deepeval_weighted_score(reply: str, logprobs: Logprobs | None) -> float:
    """The 0-1 score DeepEval's GEval reports for `reply` (logprobs None: a judge without logprobs)."""
    return geval_score(reply, logprobs).score
