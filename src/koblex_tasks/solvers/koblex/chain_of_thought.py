"""Chain of thought (KoBLEX Table 2, "CoT"): few-shot "Reasoning: ... Answer: ..." closed book.

As in the released `cot_openai.py`, the prompt pairs the standard-prompting system text with the CoT examples.
"""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.solvers.koblex._common import answer_closed_book


@solver
def chain_of_thought(prompt_version: str = "v1") -> Solver:
    """Reason step by step, then answer; the text after the last "Answer:" is scored."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await answer_closed_book(state, generate, "chain_of_thought", "cot", prompt_version)

    return solve
