"""`koblex replay FILE`: run a released KoBLEX prediction file through the KoBLEX task and report the means."""

from dataclasses import dataclass
from pathlib import Path

from inspect_ai.log import EvalLog

from koblex_tasks.errors import DataError
from koblex_tasks.replay.run import Display, headline_means, run_replay_eval
from koblex_tasks.solvers.koblex import replay
from koblex_tasks.tasks.koblex.dataset import load_koblex
from koblex_tasks.tasks.koblex.released import (
    index_by_question,
    infer_method_and_model,
    load_released,
    question_key,
)
from koblex_tasks.tasks.koblex.spec import KOBLEX
from koblex_tasks.tasks.koblex.task import koblex


@dataclass(frozen=True)
class ReplayResult:
    log: EvalLog
    method: str
    model: str
    headline: dict[str, float]


def check_alignment(file: str, data: str | None) -> None:
    """Every question must have exactly one prediction (and vice versa), before any eval starts."""
    questions = load_koblex(data)
    index = index_by_question(load_released(file), file)
    keys = {question_key(r["background"] + r["question"]) for r in questions.records}
    missing, extra = len(keys - index.keys()), len(index.keys() - keys)
    if missing or extra:
        raise DataError(
            file, None, f"{missing} questions have no prediction and {extra} predictions match no question"
        )


def run_replay(
    file: str,
    data: str | None = None,
    official: bool = False,
    log_dir: str = "logs",
    method: str | None = None,
    model_name: str | None = None,
    display: Display = "none",
) -> ReplayResult:
    check_alignment(file, data)
    inferred_method, inferred_model = infer_method_and_model(file)
    method = method or inferred_method or Path(file).stem
    model_name = model_name or inferred_model or "unknown"
    log = run_replay_eval(
        koblex(data=data, official=official),
        replay(file=file, method=method, model_name=model_name),
        model_name,
        log_dir,
        metadata={"replay_file": str(file), "method": method},
        display=display,
    )
    return ReplayResult(log=log, method=method, model=model_name, headline=headline_means(log, KOBLEX))
