"""`koblex replay FILE` for a LEGIT response file: the released responses graded by the judge `grader`."""

from typing import Any

from inspect_ai.log import EvalLog
from inspect_ai.model import Model

from koblex_tasks.replay.run import Display, run_replay_eval
from koblex_tasks.solvers.legit import legit_replay
from koblex_tasks.tasks.legit.responses import infer_model_name
from koblex_tasks.tasks.legit.spec import LEGIT
from koblex_tasks.tasks.legit.task import NO_GRADER_MESSAGE, legit


def run_legit_replay(
    file: str,
    data: str | None = None,
    grader: str | Model | list[str | Model] | None = None,
    log_dir: str = "logs",
    rule: str = "paper",
    model_name: str | None = None,
    restrict: bool = True,
    judge_retries: int = 2,
    display: Display = "none",
    **eval_kwargs: Any,
) -> EvalLog:
    """Score a LEGIT response file with the judge `grader`; returns the (successful) log.

    `restrict=True` keeps only documents the file answers (a missing response is otherwise an error).
    """
    if grader is None:
        raise ValueError(NO_GRADER_MESSAGE)
    generator = model_name or infer_model_name(file)
    return run_replay_eval(
        legit(data=data, rule=rule, judge_retries=judge_retries, responses=file if restrict else None),
        legit_replay(file=file, model_name=generator),
        generator,
        log_dir,
        metadata={"replay_file": str(file), "generator": generator},
        display=display,
        model_roles={LEGIT.judge_role: grader},
        **eval_kwargs,
    )
