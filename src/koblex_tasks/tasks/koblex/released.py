"""The KoBLEX paper's released prediction files (`results/<method>_<model>.jsonl`), read strictly.

Schema: `{"question": str, "answers": str | [{"answer": str, "logp": float, "comb": [str, ...]}, ...]}`.
A string `answers` means a closed-book method (no provisions). Files are matched to questions by their text
(`background + question`, compared without whitespace), so order does not matter.
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
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class ReleasedPrediction:
    line: int
    question: str
    answer: str
    provisions: list[str] | None  # None: the method outputs no provisions


def question_key(text: str) -> str:
    return _SPACE.sub("", text)


def infer_method_and_model(path: str | Path) -> tuple[str | None, str | None]:
    """`parser_gpt4o.jsonl` -> ("parser", "gpt-4o"); longest known method prefix wins (`sp_or` over `sp`)."""
    stem = Path(path).stem
    for short in sorted(METHODS, key=len, reverse=True):
        if stem.startswith(short + "_"):
            model = stem[len(short) + 1 :]
            return METHODS[short], MODEL_NAMES.get(model, model)
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


def index_by_question(predictions: list[ReleasedPrediction], source: str) -> dict[str, ReleasedPrediction]:
    index: dict[str, ReleasedPrediction] = {}
    for p in predictions:
        key = question_key(p.question)
        if key in index:
            raise DataError(source, p.line, f"question already answered at line {index[key].line}")
        index[key] = p
    return index
