"""Standard prompting (KoBLEX Table 2, "Standard Prompting"): few-shot, closed book, answer only."""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.solvers._common import answer_with_prompt, evidence, koblex_prompt, official_question


@solver
def standard_prompting(prompt_version: str = "v1") -> Solver:
    """Ask for the answer directly from the five in-context examples; no statutes are retrieved."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        evidence("standard_prompting", uses_retrieval=False)
        prompt = koblex_prompt(state, "sp", prompt_version)
        return await answer_with_prompt(state, generate, prompt.render(question=official_question(state)))

    return solve
