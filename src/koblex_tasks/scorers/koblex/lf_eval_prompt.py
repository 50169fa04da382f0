"""The LF-Eval judge prompt, in the variant's wording, filled from one KoBLEX sample.

"deepeval" (`koblex/lf_eval.v2.<lang>`, the default): DeepEval GEval's evaluation-results prompt as DeepEval
3.2.x renders it for the paper's metric (its five evaluation steps, the test-case parameters Input, Actual
Output, Expected Output, Context), built like the paper's script builds the test case: input = background +
question with no separator, context = the gold provision strings as DeepEval stringifies a list (Python
`str(list)`), each value followed by " \n\n" as DeepEval writes it. DeepEval passes its f-string through
`textwrap.dedent`, which leaves the indentation (the numbered steps start at column 0) but blanks
whitespace-only lines, the sample's own included; the same call is applied here.

"bare" (`koblex/lf_eval.v1.<lang>`): the cheaper single-token prompt (criteria, steps, "Score:"); background
and question joined by a newline, provisions one per line.

The answer is the model's answer without a leading `<think>` block; `official=True` instead cuts the raw
answer to its first 800 characters, as the paper's script did.
"""

import textwrap
from collections.abc import Sequence
from typing import Literal

from inspect_ai.scorer import Target
from inspect_ai.solver import TaskState

from koblex_tasks.prompts import Prompt, load_prompt
from koblex_tasks.scorers.koblex.answer import extract_answer
from koblex_tasks.scorers.koblex.lf_eval_parse import VARIANTS, Variant
from koblex_tasks.scorers.koblex.text import scored_answer

PROMPT_NAME = "koblex/lf_eval"
PROMPT_VERSIONS: dict[Variant, str] = {"deepeval": "v2", "bare": "v1"}
Language = Literal["en", "ko"]


def judge_prompt(variant: Variant, language: Language) -> Prompt:
    if variant not in VARIANTS:
        raise ValueError(f"LF-Eval prompt must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if language not in ("en", "ko"):
        raise ValueError(f"language must be 'en' or 'ko', got {language!r}")
    return load_prompt(PROMPT_NAME, f"{PROMPT_VERSIONS[variant]}.{language}")


def render_prompt(
    variant: Variant,
    prompt: Prompt,
    state: TaskState,
    target: Target,
    official: bool,
    context: Sequence[str] | None = None,
    reference: bool = True,
) -> str:
    """The judge's user message; `context` the gold provisions' texts (default: the sample's metadata, as old
    logs carry them); `reference=False` leaves the expected output empty (a sensitivity variant)."""
    meta = state.metadata or {}
    provisions = [str(p) for p in (context if context is not None else meta.get("gold_provisions") or [])]
    answer = scored_answer(extract_answer(state), official)
    expected = target.text if reference else ""
    has_parts = "background" in meta and "question" in meta
    if variant == "bare":
        question = f"{meta['background']}\n{meta['question']}" if has_parts else state.input_text
        return prompt.render(
            question=question, answer=answer, expected=expected, provisions="\n".join(provisions)
        )
    text = prompt.render(
        input=f"{meta['background']}{meta['question']}" if has_parts else state.input_text,
        actual_output=answer,
        expected_output=expected,
        context=str(provisions),
    )
    return textwrap.dedent(text)
