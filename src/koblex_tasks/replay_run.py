"""`koblex replay FILE`: run a released prediction file through the KoBLEX task and report the means."""

from dataclasses import dataclass
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from koblex_tasks.errors import DataError
from koblex_tasks.released import index_by_question, infer_method_and_model, load_released, question_key
from koblex_tasks.scorers.metrics import metric_values
from koblex_tasks.solvers import replay
from koblex_tasks.tasks import koblex
from koblex_tasks.tasks.koblex_data import load_koblex

HEADLINE = {"provision_f1": "provision_match", "provision_em": "provision_match", "token_f1": "token_f1"}


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


def headline_means(log: EvalLog) -> dict[str, float]:
    """Scored means on Inspect's 0-1 scale; provision keys only when the run scored any provisions."""
    out: dict[str, float] = {}
    for score in log.results.scores if log.results else []:
        metrics = metric_values(score)
        if score.name in HEADLINE and metrics.get("scored_count", 0) > 0:
            out[score.name] = metrics["scored_mean"]
    return {k: out[k] for k in HEADLINE if k in out}


def run_replay(
    file: str,
    data: str | None = None,
    official: bool = False,
    log_dir: str = "logs",
    method: str | None = None,
    model_name: str | None = None,
    display: str = "none",
) -> ReplayResult:
    check_alignment(file, data)
    inferred_method, inferred_model = infer_method_and_model(file)
    method = method or inferred_method or Path(file).stem
    model_name = model_name or inferred_model or "unknown"
    [log] = inspect_eval(
        koblex(data=data, official=official),
        solver=replay(file=file, method=method, model_name=model_name),
        model=f"replay/{model_name}",
        log_dir=log_dir,
        display=display,
        metadata={"replay_file": str(file), "method": method},
    )
    if log.status != "success":
        message = log.error.message if log.error else log.status
        raise RuntimeError(f"replay of {file} did not finish: {message}")
    return ReplayResult(log=log, method=method, model=model_name, headline=headline_means(log))
