"""`require_grader`: a setup step that stops a sample before any model call when no judge is bound."""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.judge_role import GRADER_ROLE, grader_bound


class GraderRequiredError(RuntimeError):
    """A task that needs a judge was started without one."""


@solver
def require_grader(message: str, role: str = GRADER_ROLE) -> Solver:
    """Fail the sample with `message` before any model call when no model is bound to `role`.

    Used as a task's `setup` step, which Inspect runs first and keeps even when `--solver` replaces the main
    solver. Without it, `get_model(role=...)` would silently return the model under test as its own judge.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if not grader_bound(role):
            raise GraderRequiredError(message)
        return state

    return solve
