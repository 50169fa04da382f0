"""Standard prompting (KoBLEX Table 2, "Standard Prompting"): few-shot, closed book, answer only.

The official scripts: `sp_vllm.py` (system turn + examples as the user turn) and `sp_openai.py` (one user
message); the task's `chat_format` picks which. The answer is the text after the last "Answer:".
"""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.solvers.koblex._common import answer_closed_book

# Answers without retrieving: a task built with this solver loads no corpus (`solvers.discovery`).
RETRIEVES = False


@solver
def standard_prompting(prompt_version: str = "v2") -> Solver:
    """Ask for the answer directly from the five in-context examples; no statutes are retrieved.

    Args:
        prompt_version: version of the `sp` template ("v2" with `sp_system`; "v1" the single-file wording).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await answer_closed_book(state, generate, "standard_prompting", "sp", prompt_version)

    return solve
