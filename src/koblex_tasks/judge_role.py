"""The judge model role, shared by both benchmarks: is a judge bound, and what to say when it is not.

`get_model(role="grader")` silently returns the model under test when no model is bound to the role, so every
judge scorer and the LEGIT setup step check `grader_bound()` first: a model must never grade itself.
"""

import contextvars

from inspect_ai.model import model_roles

from koblex_tasks._inspect_compat import active_model, eval_running

GRADER_ROLE = "grader"

# Set by a builder that initialises the model roles itself before building tasks (the grid builds its tasks
# before `eval_set` runs them), so the roles it set are the ones the run will have.
ROLES_SET_BY_BUILDER: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "koblex_roles_set_by_builder", default=False
)


def grader_bound(role: str = GRADER_ROLE) -> bool:
    """Is a model explicitly bound to `role` (task `model_roles`, `--model-role` or `eval(model_roles=)`)?

    Only meaningful inside a running task (solver/scorer), or while a registry task is being constructed by
    `eval()`/`inspect eval` (Inspect initialises the eval-level roles before calling the task function).
    """
    bound = model_roles().get(role)
    return bool(bound) if isinstance(bound, list) else bound is not None


def built_by_eval() -> bool:
    """Is Inspect building this task inside `eval()` / `inspect eval`, so the eval's model roles are known?

    Inspect initialises the active model and the model roles before it calls a registry task's function; a
    task function called directly (`eval(legit(...))`) runs before either. Both stay set after an eval ends, so
    the check also asks Inspect whether an eval is running now (a private flag, read defensively: without it,
    the active model alone decides). A builder that sets the roles itself (the grid) says so through
    `ROLES_SET_BY_BUILDER`.
    """
    if ROLES_SET_BY_BUILDER.get():
        return True
    return active_model() is not None and eval_running() is not False


def judge_required_message(title: str, task: str, role: str = GRADER_ROLE) -> str:
    """The one-line refusal for a benchmark that cannot be scored without a judge."""
    return (
        f"{title} cannot be scored without a judge: bind the '{role}' model role, e.g. "
        f"`inspect eval {task} --model <model> --model-role {role}=<judge model>` "
        f"(or eval(..., model_roles={{'{role}': ...}})). Refusing to generate any answers without one."
    )
