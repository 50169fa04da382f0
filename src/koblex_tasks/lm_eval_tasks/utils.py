"""lm-eval hooks for the KoBLEX closed-book tasks, reusing the Inspect side's loader, prompts and metric.

lm-eval imports this file by path (`!function utils.fn` in the YAML), so everything shared is imported from
the installed `koblex_tasks` package rather than copied.
"""

import os
from typing import Any

from koblex_tasks.benchmarks.koblex.evidence import OFFICIAL_ANSWER
from koblex_tasks.data.koblex.dataset import LANG_SUFFIX, gold_provisions
from koblex_tasks.data.koblex.dataset import load_koblex as _load_records
from koblex_tasks.hub import HubUnavailableError
from koblex_tasks.prompts import load_prompt
from koblex_tasks.scorers.koblex.text import official_prediction, strip_reasoning, token_f1

DATA_ENV = "KOBLEX_DATA"
LANG_ENV = "KOBLEX_LANG"
PROMPT_VERSION = "v1"  # single-file prompts: lm-eval sends one text (system part and examples together)
HUB_HINT = f"set {DATA_ENV}=PATH to a local KoBLEX JSONL instead"


def load_koblex(
    data: str | None = None, lang: str | None = None, revision: str | None = None, **_: Any
) -> "Any":
    """`custom_dataset`: a DatasetDict with one `test` split of flat KoBLEX docs.

    Source: `data` (from `--metadata`), else `$KOBLEX_DATA`, else the Hugging Face dataset. The records go
    through the same validation as the Inspect task.
    """
    import datasets

    lang = lang or os.environ.get(LANG_ENV) or "ko"
    try:
        loaded = _load_records(data or os.environ.get(DATA_ENV) or None, lang, revision)
    except HubUnavailableError as exc:  # told with lm-eval's way to pass a local file
        raise exc.with_hint(HUB_HINT) from exc
    suffix = LANG_SUFFIX[lang]
    docs = [
        {
            "id": r["id"],
            "background": r["background" + suffix],
            "question": r["question" + suffix],
            "answer": r["answer" + suffix],
            "gold_provisions": gold_provisions(r, lang),
            "hop_count": len(r["contexts"]),
            "lang": lang,
            "source": loaded.source,
        }
        for r in loaded.records
    ]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


def official_question(doc: dict[str, Any]) -> str:
    """Background and question with no separator, as the Inspect solvers and the official scripts build it."""
    return doc["background"] + doc["question"]


def doc_to_text_sp(doc: dict[str, Any]) -> str:
    return load_prompt("koblex/sp", PROMPT_VERSION).render(question=official_question(doc))


def doc_to_text_cot(doc: dict[str, Any]) -> str:
    return load_prompt("koblex/cot", PROMPT_VERSION).render(question=official_question(doc))


def extract_answer(completion: str) -> str:
    """The text after the last "Answer:" (the whole completion if absent): the Inspect scorers' rule."""
    return OFFICIAL_ANSWER.apply(completion)


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Token F1 exactly as the Inspect `token_f1` scorer computes it (and its `official=True` variant)."""
    answer = extract_answer(results[0] if results else "")
    prediction = strip_reasoning(answer)
    official = round(token_f1(official_prediction(answer), doc["answer"])[2], 4)
    return {
        "token_f1": token_f1(prediction, doc["answer"])[2],
        "token_f1_official": official,
        "empty_answer": float(not prediction.strip()),
    }
