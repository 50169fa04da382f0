"""`legit_replay`: a released LEGIT response file as the model's answers, graded by the judge as usual."""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.errors import DataError
from koblex_tasks.solvers.common import replayed_output
from koblex_tasks.tasks.legit.responses import infer_model_name, load_responses


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
        doc_id = str(state.metadata.get("doc_id", state.sample_id))
        response = responses.get(doc_id)
        if response is None:
            raise DataError(
                file,
                None,
                f"no response for doc {doc_id!r} (use the task option responses=FILE to keep only "
                "the documents the file answers)",
            )
        state.metadata["replay"] = {"file": str(file), "generator": generator}
        return replayed_output(state, generator, response)

    return solve
