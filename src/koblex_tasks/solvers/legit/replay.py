"""`legit_replay`: a released LEGIT response file as the model's answers, graded by the judge as usual."""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.data.legit.responses import infer_model_name, load_responses
from koblex_tasks.solvers.common import replayed_output
from koblex_tasks.solvers.legit._common import released_row


@solver
def legit_replay(file: str, model_name: str | None = None) -> Solver:
    """Use the file's response for each document instead of calling a model.

    Args:
        file: a LEGIT response file.
        model_name: the generator (default: from the file name); recorded in sample metadata.
    """
    responses = load_responses(file)
    generator = model_name or infer_model_name(file)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        response = released_row(responses, file, state, "response", "responses")
        state.metadata["replay"] = {"file": str(file), "generator": generator}
        return replayed_output(state, generator, response)

    return solve
