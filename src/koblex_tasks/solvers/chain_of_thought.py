"""Chain of thought (KoBLEX Table 2, "CoT"): few-shot "Reasoning: ... Answer: ..." closed book."""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.solvers._common import answer_with_prompt, evidence, koblex_prompt, official_question


@solver
def chain_of_thought(prompt_version: str = "v1") -> Solver:
    """Reason step by step, then answer; the text after the last "Answer:" is scored."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        evidence("chain_of_thought", uses_retrieval=False)
        prompt = koblex_prompt(state, "cot", prompt_version)
        return await answer_with_prompt(state, generate, prompt.render(question=official_question(state)))

    return solve
