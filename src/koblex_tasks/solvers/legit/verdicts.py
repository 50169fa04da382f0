"""`legit_verdicts`: a released evaluator file as both the answers and the judge's verdicts.

Each row of `results/reasoning_tasks_<generator>_evaluator_<judge>.jsonl` holds the generator's response and
the judge's per-issue verdicts. The solver makes the response the sample's output (as `legit_replay` does) and
hands the row to the rubric scorer in the sample metadata (`replayed_verdicts`), which then grades with those
verdicts instead of calling a judge. Use it through the task (`-T verdicts=FILE`, or `koblex replay --verdicts
FILE`), which binds the judge role to the file's judge and builds the scorer for replayed verdicts.
"""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.benchmarks.legit.spec import REPLAYED_KEY
from koblex_tasks.data.legit.verdicts import load_verdicts
from koblex_tasks.solvers.common import replayed_output
from koblex_tasks.solvers.legit._common import released_row


@solver
def legit_verdicts(file: str, model_name: str | None = None) -> Solver:
    """Use the file's response and verdicts for each document instead of calling a model or a judge.

    Args:
        file: a released LEGIT evaluator file.
        model_name: the generator (default: from the file name); recorded in sample metadata.
    """
    verdicts = load_verdicts(file)
    generator = model_name or verdicts.generator

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        row = released_row(verdicts.rows, file, state, "verdict row", "verdicts")
        state.metadata["replay"] = {"file": str(file), "generator": generator}
        state.metadata[REPLAYED_KEY] = row.as_metadata(str(file))
        return replayed_output(state, generator, row.response)

    return solve
