"""`koblexmock/<name>`: a scripted, offline model that speaks every KoBLEX prompt's format.

It answers an LF-Eval judge prompt with the score 7 (DeepEval's prompt, ending "JSON:", with a JSON object
`{"score": 7, "reason": ...}`; the bare prompt, ending "Score:", with "7"), a LEGIT issue judge with a
covered-and-correct verdict, a parametric-provision prompt with a one-item list echoing the question, a
selection prompt with `Answer: 0`, and anything else with `Answer: ` plus the first sentence of the prompt's
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
from inspect_ai.model._providers.mockllm import MockLLM
from inspect_ai.tool import ToolChoice, ToolInfo


def usage_for(prompt: str, completion: str) -> ModelUsage:
    inp, out = max(1, len(prompt) // 4), max(1, len(completion) // 4)
    return ModelUsage(input_tokens=inp, output_tokens=out, total_tokens=inp + out)


JUDGE_SCORE = 7
_JUDGE_JSON = f'{{"score": {JUDGE_SCORE}, "reason": "scripted"}}'


def is_lf_eval_json_prompt(prompt: str) -> bool:
    """DeepEval's G-Eval prompt (LF-Eval's default): it ends with "JSON:" and asks for a `score` key."""
    return prompt.rstrip().endswith("JSON:") and '"score"' in prompt


def scripted_reply(prompt: str) -> str:
    if is_lf_eval_json_prompt(prompt):
        return _JUDGE_JSON
    if prompt.rstrip().endswith(("Score:", "점수:")):
        return str(JUDGE_SCORE)  # the bare LF-Eval prompt asks for the score alone
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
