"""`legit_predict`: the paper's prediction call (`reasoning_task_solve.py` of jinulee-v/LEGIT).

System prompt `prompts/legit/system.v1.txt` (the official `SYSTEM_PROMPT` verbatim) and the question as the
user message.
"""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.solvers.legit._common import expert_conversation, question


@solver
def legit_predict(prompt_version: str = "v1") -> Solver:
    """The paper's prediction call: expert system prompt, the question (facts + claims) as the user turn."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        expert_conversation(state, "predict", prompt_version, question=question(state))
        return await generate(state)

    return solve
