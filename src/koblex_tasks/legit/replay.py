"""Replay a LEGIT response file (`{"doc_id", "response"}` per line, as in the release's
`results/reasoning_tasks_<model>.jsonl`) through the LEGIT task: the response is the output, the judge grades.

`run_legit_replay` is the back end for `koblex replay FILE --benchmark legit`.
"""

from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessageAssistant, Model, ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver

import koblex_tasks.replay_model  # noqa: F401  (registers the `replay/<name>` model label)
from koblex_tasks.errors import DataError
from koblex_tasks.jsonl import read_jsonl

RELEASE_PREFIX = "reasoning_tasks_"


def load_responses(path: str | Path) -> dict[str, str]:
    """doc_id -> response, strictly: each line needs string `doc_id` and `response`, doc_ids are unique."""
    where = str(path)
    out: dict[str, str] = {}
    lines: dict[str, int] = {}
    for line, obj in read_jsonl(path):
        doc_id, response = obj.get("doc_id"), obj.get("response")
        if not isinstance(doc_id, str) or not doc_id:
            raise DataError(where, line, "missing non-empty string field 'doc_id'")
        if not isinstance(response, str):
            raise DataError(where, line, f"field 'response' must be a string (doc {doc_id!r})")
        if doc_id in out:
            raise DataError(where, line, f"duplicate doc_id {doc_id!r} (first on line {lines[doc_id]})")
        out[doc_id] = response
        lines[doc_id] = line
    if not out:
        raise DataError(where, None, "no responses")
    return out


def infer_model_name(path: str | Path) -> str:
    """`reasoning_tasks_gpt-4.1.jsonl` -> `gpt-4.1`; `o3.jsonl` -> `o3`."""
    stem = Path(path).stem
    return stem[len(RELEASE_PREFIX) :] if stem.startswith(RELEASE_PREFIX) else stem


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
        state.output = ModelOutput.from_content(model=generator, content=response)
        state.messages.append(ChatMessageAssistant(content=response, model=generator))
        return state

    return solve


def run_legit_replay(
    file: str,
    data: str | None = None,
    grader: str | Model | list[str | Model] | None = None,
    log_dir: str = "logs",
    rule: str = "paper",
    model_name: str | None = None,
    restrict: bool = True,
    judge_retries: int = 2,
    display: str = "none",
    **eval_kwargs: Any,
) -> EvalLog:
    """Score a LEGIT response file with the judge `grader`; returns the (successful) log.

    `restrict=True` keeps only documents the file answers (a missing response is otherwise an error).
    """
    if grader is None:
        from koblex_tasks.legit.solvers import NO_GRADER_MESSAGE

        raise ValueError(NO_GRADER_MESSAGE)
    from koblex_tasks.legit.task import legit

    generator = model_name or infer_model_name(file)
    [log] = inspect_eval(
        legit(data=data, rule=rule, judge_retries=judge_retries, responses=file if restrict else None),
        solver=legit_replay(file=file, model_name=generator),
        model=f"replay/{generator}",
        model_roles={"grader": grader},
        log_dir=log_dir,
        display=display,
        metadata={"replay_file": str(file), "generator": generator},
        **eval_kwargs,
    )
    if log.status != "success":
        message = log.error.message if log.error else log.status
        raise RuntimeError(f"LEGIT replay of {file} did not finish: {message}")
    return log
