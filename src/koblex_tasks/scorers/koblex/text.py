"""Answer normalisation and token F1, as defined by the KoBLEX paper's evaluation script."""

import re
from collections import Counter

_NON_TOKEN = re.compile(r"[^가-힣a-z0-9\s]")
_SPACES = re.compile(r"\s+")
_THINK_BLOCK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)
OFFICIAL_MAX_CHARS = 800
# The official script splits on "<\think>", in which Python reads "\t" as a TAB: the split never fires.
OFFICIAL_THINK_SEPARATOR = "<\think>"


def normalize(text: str) -> str:
    """Lowercase; every character that is not a Hangul syllable, a-z, 0-9 or whitespace becomes a space."""
    return _SPACES.sub(" ", _NON_TOKEN.sub(" ", text.lower())).strip()


def tokens(text: str) -> list[str]:
    return normalize(text).split()


def token_f1(prediction: str, reference: str) -> tuple[float, float, float]:
    """SQuAD-style multiset overlap: (precision, recall, F1); no overlap gives zeros."""
    pred, ref = tokens(prediction), tokens(reference)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0, 0.0, 0.0
    precision, recall = same / len(pred), same / len(ref)
    return precision, recall, 2 * precision * recall / (precision + recall)


def strip_reasoning(answer: str) -> str:
    """Drop a leading `<think>...</think>` block (reasoning models), which is not part of the answer."""
    return _THINK_BLOCK.sub("", answer, count=1)


def official_prediction(answer: str) -> str:
    """What the official script scores: the answer split on its (never matching) separator, cut to 800 chars."""
    return answer.split(OFFICIAL_THINK_SEPARATOR)[0][:OFFICIAL_MAX_CHARS] if answer else ""


def scored_answer(answer: str, official: bool) -> str:
    """The answer as token F1 and LF-Eval see it: the official script's cut, or the answer without its
    leading reasoning block."""
    return official_prediction(answer) if official else strip_reasoning(answer)
