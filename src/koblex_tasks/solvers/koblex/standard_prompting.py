"""Standard prompting (KoBLEX Table 2, "Standard Prompting"): few-shot, closed book, answer only."""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.solvers.koblex._common import answer_closed_book


@solver
def standard_prompting(prompt_version: str = "v1") -> Solver:
    """Ask for the answer directly from the five in-context examples; no statutes are retrieved."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await answer_closed_book(state, generate, "standard_prompting", "sp", prompt_version)

    return solve
