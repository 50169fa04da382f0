"""The KoBLEX paper's released prediction files (`results/<method>_<model>.jsonl`), read strictly.

Schema: `{"question": str, "answers": str | [{"answer": str, "logp": float, "comb": [str, ...]}, ...]}`.
A string `answers` means a closed-book method (no provisions). `question` is usually `background + question`,
in some files the question alone; `alignment.py` matches rows to questions.

File names are `<method>_<model>`: methods `sp`, `cot`, `sp_or`, `cot_or`, `selfask` (also `self-ask`),
`ircot`, `flare`, `probtree`, `beamaggr`, `parser`; models `gpt4o`, `qwen_32b`/`qwen32b`, `qwen_8b`,
`exaone_32b`, `exaone_7.8b` (the paper's Qwen3 and EXAONE-3.5 models).
"""

import re
from dataclasses import dataclass
from pathlib import Path

from koblex_tasks.errors import DataError
from koblex_tasks.jsonl import read_jsonl

METHODS = {
    "sp": "standard_prompting",
    "cot": "chain_of_thought",
    "sp_or": "one_time_retrieval",
    "cot_or": "cot_one_time_retrieval",
    "selfask": "self_ask",
    "ircot": "ircot",
    "flare": "flare",
    "probtree": "probtree",
    "beamaggr": "beamaggr",
    "parser": "parser",
}
MODEL_NAMES = {"gpt4o": "gpt-4o"}
# The paper's open models, by family: the size token (`32b`, `7.8b`) completes the name.
MODEL_FAMILIES = {"qwen": "Qwen3-{size}", "exaone": "EXAONE-3.5-{size}"}
_SPACE = re.compile(r"\s+")
_SIZED_MODEL = re.compile(r"^([a-z]+)[_-]?([0-9]+(?:\.[0-9]+)?b)$")
_FILE_SUFFIXES = (".jsonl", ".json")


@dataclass(frozen=True)
class ReleasedPrediction:
    line: int
    question: str
    answer: str
    provisions: list[str] | None  # None: the method outputs no provisions


def question_key(text: str) -> str:
    return _SPACE.sub("", text)


def model_name(token: str) -> str:
    """`gpt4o` -> gpt-4o, `qwen_32b`/`qwen32b` -> Qwen3-32B, `exaone_7.8b` -> EXAONE-3.5-7.8B; else unchanged."""
    lower = token.lower()
    if lower in MODEL_NAMES:
        return MODEL_NAMES[lower]
    sized = _SIZED_MODEL.match(lower)
    if sized and sized.group(1) in MODEL_FAMILIES:
        return MODEL_FAMILIES[sized.group(1)].format(size=sized.group(2).upper())
    return token


def infer_method_and_model(path: str | Path) -> tuple[str | None, str | None]:
    """`sp_or_exaone_7.8b.jsonl` -> ("one_time_retrieval", "EXAONE-3.5-7.8B"); (None, None) if no method fits.

    The longest known method prefix wins (`sp_or` over `sp`); `-` in the method is ignored (`self-ask`).
    Only `.jsonl`/`.json` is cut from the name, so `7.8b` survives.
    """
    name = Path(path).name
    for suffix in _FILE_SUFFIXES:
        name = name.removesuffix(suffix)
    parts = name.split("_")
    for cut in range(len(parts) - 1, 0, -1):
        short = "_".join(parts[:cut]).lower().replace("-", "")
        if short in METHODS:
            return METHODS[short], model_name("_".join(parts[cut:]))
    return None, None


def load_released(path: str | Path) -> list[ReleasedPrediction]:
    source = str(path)
    predictions = []
    for line, obj in read_jsonl(source):
        question, answers = obj.get("question"), obj.get("answers")
        if not isinstance(question, str):
            raise DataError(source, line, "missing string field 'question'")
        if isinstance(answers, str):
            predictions.append(ReleasedPrediction(line, question, answers, None))
            continue
        if not isinstance(answers, list) or not answers or not isinstance(answers[0], dict):
            raise DataError(source, line, "field 'answers' must be a string or a non-empty list of objects")
        first = answers[0]
        answer, comb = first.get("answer"), first.get("comb")
        if not isinstance(answer, str):
            raise DataError(source, line, "answers[0] lacks a string 'answer'")
        if not isinstance(comb, list) or not all(isinstance(c, str) for c in comb):
            raise DataError(source, line, "answers[0] lacks a list of strings 'comb'")
        predictions.append(ReleasedPrediction(line, question, answer, list(comb)))
    if not predictions:
        raise DataError(source, None, "no predictions in the file")
    return predictions
