"""Replay: turn a released prediction file into an ordinary Inspect run, scored by the same scorers."""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.data.koblex.alignment import align_released_file
from koblex_tasks.data.koblex.released import infer_method_and_model
from koblex_tasks.errors import DataError
from koblex_tasks.solvers.common import replayed_output
from koblex_tasks.solvers.koblex._common import evidence

# Answers without retrieving: a task built with this solver loads no corpus (`solvers.discovery`).
RETRIEVES = False


@solver
def replay(
    file: str, method: str | None = None, model_name: str | None = None, data: str | None = None
) -> Solver:
    """Use the answer (and provisions) the file holds for each question instead of calling a model.

    The file is aligned to the questions when the solver is built, before any sample runs (rules in
    `koblex_tasks.data.koblex.alignment`); each sample's metadata `replay` records the row and the rule,
    and for a row paired by position its similarity to its question and to the closest other one.

    Args:
        file: a released KoBLEX prediction file (see `koblex_tasks.data.koblex.released`).
        method: the method that produced it (default: inferred from the file name).
        model_name: the model that produced it (default: inferred from the file name).
        data: the questions JSONL the task reads (default: the published dataset); pass the task's `data`.
    """
    inferred_method, inferred_model = infer_method_and_model(file)
    method = method or inferred_method or "unknown"
    model_name = model_name or inferred_model or "unknown"
    alignment = align_released_file(file, data)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        aligned = alignment.by_id.get(str(state.sample_id))
        if aligned is None:
            raise DataError(file, None, f"no prediction for sample {state.sample_id!r}")
        prediction = aligned.prediction
        record = evidence(method, uses_retrieval=prediction.provisions is not None)
        record.predicted = list(prediction.provisions or [])
        state.metadata["replay"] = {"file": file, **aligned.describe(), "method": method, "model": model_name}
        return replayed_output(state, model_name, prediction.answer)

    return solve
