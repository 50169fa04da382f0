"""Where the score is in an LF-Eval judge reply: its value and the character offset it starts at.

Two reply shapes, one per prompt variant:
- "deepeval": DeepEval's JSON object. As DeepEval's `trimAndLoadJson` does, the object starts at the first "{"
  (after a leading `<think>` block, which DeepEval did not skip); a missing final "}" or a trailing comma is
  tolerated. The value is the top-level `score` member wherever it stands (the last one if repeated, as
  `json.loads` keeps it), read with its sign.
- "bare": the score the reply commits to, with its sign, by the first of: the last "final score"/"최종 점수"
  number; the last "score:"/"점수:" (or "=") number; a number opening the reply (the prompt ends with
  "Score:"); the last number after "score is/of", "점수는". So "Final score: 8. A score of 10 would..." is 8
  and "8. A score of 10 would..." is 8: a score merely mentioned later does not override the committed one.

A value is valid only if it is an integer 0..10 (8.0 counts as 8): "-1", 11, 7.5, "8" (a string) or true are
invalid and leave the item unscored, never clipped into range.
"""

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from koblex_tasks.scorers.koblex.text import strip_reasoning

Variant = Literal["deepeval", "bare"]
VARIANTS: tuple[Variant, ...] = ("deepeval", "bare")
MAX_SCORE = 10

_NUMBER = r"(?P<sign>[-−]\s*)?(?P<num>[0-9]+(?:\.[0-9]+)?)"
_FINAL = re.compile(r"(?:\bfinal\s+score\b|최종\s*점수)\s*(?:[:=]|is\b|는|은)?\s*" + _NUMBER, re.IGNORECASE)
_STATED = re.compile(r"(?:\bscore\b|점수)\s*[:=]\s*" + _NUMBER, re.IGNORECASE)
_LEADING = re.compile(r"\s*" + _NUMBER)
_PHRASED = re.compile(r"(?:\bscore\b|점수)\s*(?:is\b|of\b|는|은)?\s*" + _NUMBER, re.IGNORECASE)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class ScoreSpan:
    """The score a reply states: its value as written and the offset of its first character (sign or digit)."""

    value: Any
    start: int

    @property
    def score(self) -> int | None:
        return valid_score(self.value)


def valid_score(value: Any) -> int | None:
    """An integer 0..10, or None (bools, strings, fractions, negatives and values above 10 are invalid)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    score = int(value)
    return score if 0 <= score <= MAX_SCORE else None


def _body_start(text: str) -> int:
    """Offset after a leading `<think>...</think>` block (reasoning models), else 0."""
    return len(text) - len(strip_reasoning(text))  # strip_reasoning only ever removes a prefix


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\n\r":
        i += 1
    return i


def json_score(text: str) -> ScoreSpan | None:
    """The top-level `score` member of the reply's JSON object, or None if there is no parsable object/score."""
    i = text.find("{", _body_start(text))
    if i < 0:
        return None
    found: ScoreSpan | None = None
    i += 1
    try:
        while True:
            i = _skip_ws(text, i)
            if i >= len(text) or text[i] == "}":
                return found
            key, i = _DECODER.raw_decode(text, i)
            if not isinstance(key, str):
                return None
            i = _skip_ws(text, i)
            if text[i : i + 1] != ":":
                return None
            i = _skip_ws(text, i + 1)
            value, end = _DECODER.raw_decode(text, i)
            if key == "score":
                found = ScoreSpan(value, i)
            i = _skip_ws(text, end)
            if text[i : i + 1] == ",":
                i += 1
            elif i < len(text) and text[i] != "}":
                return None
    except json.JSONDecodeError:
        return None


def _committed(text: str, start: int) -> re.Match[str] | None:
    """The match of the committed score (tiers in the module docstring)."""
    for pattern in (_FINAL, _STATED):
        found = list(pattern.finditer(text, start))
        if found:
            return found[-1]
    leading = _LEADING.match(text, start)
    if leading is not None:
        return leading
    phrased = list(_PHRASED.finditer(text, start))
    return phrased[-1] if phrased else None


def bare_score(text: str) -> ScoreSpan | None:
    """The score the bare reply commits to (see the module docstring); None if there is none."""
    match = _committed(text, _body_start(text))
    if match is None:
        return None
    number = match.group("num")
    magnitude: int | float = float(number) if "." in number else int(number)
    value = -magnitude if match.group("sign") else magnitude
    return ScoreSpan(value, match.start("sign") if match.group("sign") else match.start("num"))


def locate_score(variant: Variant, text: str) -> ScoreSpan | None:
    return json_score(text) if variant == "deepeval" else bare_score(text)


def parse_score(text: str, variant: Variant = "bare") -> int | None:
    """The valid score (0..10) a reply states, or None."""
    span = locate_score(variant, text)
    return span.score if span is not None else None
