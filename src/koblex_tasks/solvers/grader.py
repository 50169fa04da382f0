"""No judged run without a judge: refuse when the task is built (`refuse_without_grader`) and, as the safety net
for entry points that build the task outside an eval, before the first model call (`require_grader`)."""

from inspect_ai.model import model_roles
from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.errors import SetupError
from koblex_tasks.judge_role import GRADER_ROLE, built_by_eval, grader_bound


class GraderRequiredError(SetupError, RuntimeError):
    """A task that needs a judge was started without one."""


def refuse_without_grader(message: str, role: str = GRADER_ROLE) -> None:
    """Raise `GraderRequiredError(message)` when the eval building this task binds no model to `role`.

    A no-op outside an eval (the `require_grader` setup step covers that case).
    """
    if built_by_eval() and not grader_bound(role):
        raise GraderRequiredError(message)


@solver
def require_grader(message: str, role: str = GRADER_ROLE, expected: str | None = None) -> Solver:
    """Fail the sample with `message` before any model call when no model is bound to `role`.

    Used as a task's `setup` step, which Inspect runs first and keeps even when `--solver` replaces the main
    solver. Without it, `get_model(role=...)` would silently return the model under test as its own judge.
    With `expected` (replayed verdicts: `replay/<judge>`), the bound model must be that one, so the log never
    names a judge that did not grade.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if not grader_bound(role):
            raise GraderRequiredError(message)
        bound = model_roles().get(role)
        if expected is not None and str(bound) != expected:
            raise GraderRequiredError(
                f"the '{role}' role is bound to {bound}, but this run grades with the verdicts of {expected}: "
                "do not bind the role"
            )
        return state

    return solve
