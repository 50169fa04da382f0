"""`koblexmock/<name>`: a scripted, offline model that speaks every registered benchmark's prompt formats.

Each benchmark says how its own prompts are answered (`Benchmark.mock`: KoBLEX's judge, provision and
selection prompts, LEGIT's issue judge); anything else gets `Answer: ` plus the first line of the prompt's
query. Every output carries `usage`, so Inspect never tries to download a tokenizer to count tokens.
"""

import math
import re
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from koblex_tasks._inspect_compat import MockLLM
from koblex_tasks.tasks import benchmarks
from koblex_tasks.tasks.koblex.mock import JUDGE_SCORE, is_lf_eval_json_prompt, query_first_line

__all__ = [
    "JUDGE_SCORE",
    "KoblexMock",
    "is_lf_eval_json_prompt",
    "scripted_output",
    "scripted_reply",
    "usage_for",
]


def usage_for(prompt: str, completion: str) -> ModelUsage:
    inp, out = max(1, len(prompt) // 4), max(1, len(completion) // 4)
    return ModelUsage(input_tokens=inp, output_tokens=out, total_tokens=inp + out)


def scripted_reply(prompt: str) -> str:
    """The first registered benchmark's own reply to `prompt`, else `Answer: ` and the query's first line."""
    for benchmark in benchmarks():
        reply = benchmark.mock(prompt) if benchmark.mock is not None else None
        if reply is not None:
            return reply
    return f"Answer: {query_first_line(prompt)}"


def scripted_output(
    messages: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
) -> ModelOutput:
    # every turn: under the system + user chat format the instructions sit in the system turn
    prompt = "\n\n".join(m.text for m in messages)
    reply = scripted_reply(prompt)
    output = ModelOutput.from_content(model="koblexmock", content=reply)
    output.usage = usage_for(prompt, reply)
    if config.logprobs:  # confident (p = 0.9) tokens, so logprob-based solvers run end to end
        # whitespace-separated pieces; in a JSON judge reply digits are their own tokens, as real tokenizers do
        split = r"[0-9]+|\s+|[^0-9\s]+" if is_lf_eval_json_prompt(prompt) else r"\S+|\s+"
        pieces = re.findall(split, reply) or [""]
        output.choices[0].logprobs = Logprobs(
            content=[
                Logprob(
                    token=t, logprob=math.log(0.9), top_logprobs=[TopLogprob(token=t, logprob=math.log(0.9))]
                )
                for t in pieces
            ]
        )
    return output


@modelapi(name="koblexmock")
class KoblexMock(MockLLM):
    """MockLLM with the scripted KoBLEX replies by default (tests may still pass `custom_outputs`)."""

    def __init__(self, *args: Any, **model_args: Any) -> None:
        model_args.setdefault("custom_outputs", scripted_output)  # MockLLM's own arguments pass through
        super().__init__(*args, **model_args)
