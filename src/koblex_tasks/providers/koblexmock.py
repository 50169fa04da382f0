"""`koblexmock/<name>`: a scripted, offline model that speaks every KoBLEX prompt's format.

It answers an LF-Eval judge prompt with the score 7, a LEGIT issue judge with a covered-and-correct verdict, a parametric-provision prompt with a one-item list echoing the question, a selection prompt with
`Answer: 0`, and anything else with `Answer: ` plus the first sentence of the prompt's query. Every output
carries `usage`, so Inspect never tries to download a tokenizer to count tokens.
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
from inspect_ai.model._providers.mockllm import MockLLM
from inspect_ai.tool import ToolChoice, ToolInfo


def usage_for(prompt: str, completion: str) -> ModelUsage:
    inp, out = max(1, len(prompt) // 4), max(1, len(completion) // 4)
    return ModelUsage(input_tokens=inp, output_tokens=out, total_tokens=inp + out)


def scripted_reply(prompt: str) -> str:
    if prompt.rstrip().endswith(("Score:", "점수:")):
        return "7"  # a judge prompt (LF-Eval) asks for a bare score
    if prompt.rstrip().endswith("<OUTPUT>") and "contains_issue" in prompt:
        # the LEGIT issue judge: covered, and correct unless the answer is empty
        correct = "true" if "<TEXT>\n\n</TEXT>" not in prompt else "false"
        return (
            f'{{"rationales": "scripted", "contains_issue": true, "correct_conclusion": {correct}}}</OUTPUT>'
        )

    query = prompt.rsplit("<Query>", 1)[-1]
    if "Candidates:" in query:
        return "Answer: 0"
    question = query.split("Question:", 1)[-1].strip().splitlines()
    first = question[0][:200] if question else ""
    if "statutory provisions" in prompt and "Answer must be a list" in prompt:
        return f'["{first.replace(chr(34), "")}"]'
    return f"Answer: {first}"


def scripted_output(
    messages: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
) -> ModelOutput:
    prompt = messages[-1].text if messages else ""
    reply = scripted_reply(prompt)
    output = ModelOutput.from_content(model="koblexmock", content=reply)
    output.usage = usage_for(prompt, reply)
    if config.logprobs:  # confident (p = 0.9) tokens, so logprob-based solvers run end to end
        pieces = re.findall(r"\S+|\s+", reply) or [""]
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
