"""Replay: turn a released prediction file into an ordinary Inspect run, scored by the same scorers."""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.errors import DataError
from koblex_tasks.solvers.common import replayed_output
from koblex_tasks.solvers.koblex._common import evidence, official_question
from koblex_tasks.tasks.koblex.released import (
    index_by_question,
    infer_method_and_model,
    load_released,
    question_key,
)


@solver
def replay(file: str, method: str | None = None, model_name: str | None = None) -> Solver:
    """Use the answer (and provisions) the file holds for each question instead of calling a model.

    Args:
        file: a released KoBLEX prediction file (see `koblex_tasks.tasks.koblex.released`).
        method: the method that produced it (default: inferred from the file name).
        model_name: the model that produced it (default: inferred from the file name).
    """
    inferred_method, inferred_model = infer_method_and_model(file)
    method = method or inferred_method or "unknown"
    model_name = model_name or inferred_model or "unknown"
    index = index_by_question(load_released(file), file)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        prediction = index.get(question_key(official_question(state)))
        if prediction is None:
            raise DataError(file, None, f"no prediction for sample {state.sample_id!r}")
        record = evidence(method, uses_retrieval=prediction.provisions is not None)
        record.predicted = list(prediction.provisions or [])
        state.metadata["replay"] = {
            "file": file,
            "line": prediction.line,
            "method": method,
            "model": model_name,
        }
        return replayed_output(state, model_name, prediction.answer)

    return solve
