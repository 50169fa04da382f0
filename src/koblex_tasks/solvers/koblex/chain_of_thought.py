"""Chain of thought (KoBLEX Table 2, "CoT"): few-shot "Reasoning: ... Answer: ..." closed book.

The two official scripts differ in the system text: `cot_vllm.py` sends COT_SYSTEM_PROMPT (answer in a
"Reasoning:" and an "Answer:" section) as the system turn, `cot_openai.py` prepends the standard-prompting
system text to the CoT examples. The task's `chat_format` picks the script: "system_user" uses `cot_system`,
"user" uses `sp_system`. The answer is the text after the last "Answer:".
"""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.solvers.koblex._common import ChatFormat, answer_closed_book

SYSTEM_BY_FORMAT: dict[ChatFormat, str] = {"system_user": "cot", "user": "sp"}  # -> koblex/<name>_system


# Answers without retrieving: a task built with this solver loads no corpus (`solvers.discovery`).
RETRIEVES = False


@solver
def chain_of_thought(prompt_version: str = "v2") -> Solver:
    """Reason step by step, then answer; the text after the last "Answer:" is scored.

    Args:
        prompt_version: version of the `cot` template ("v2" split from its system text; "v1" the single-file
            wording of `cot_openai.py`).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await answer_closed_book(
            state, generate, "chain_of_thought", "cot", prompt_version, SYSTEM_BY_FORMAT
        )

    return solve
