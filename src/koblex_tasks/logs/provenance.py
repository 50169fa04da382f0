"""What a stored run records about how it was produced: model, solver, task, data, corpus, judges, versions.

Provenance is stored as strict JSON. A non-finite number anywhere in it (``Infinity`` in a solver argument or
a usage count) is stored as null and named in a warning (``solver_args.x is not finite (inf): stored as
null``), so one odd field never stops a submission or a batch.
"""

import math
from typing import Any

from inspect_ai.log import EvalLog

from koblex_tasks.logs.coverage import Coverage
from koblex_tasks.logs.identity import RunIdentity
from koblex_tasks.logs.placement import Placement
from koblex_tasks.logs.scores import ScoreTable
from koblex_tasks.text import clip_name, printable


def jsonable(value: Any, where: str = "", warnings: list[str] | None = None) -> Any:
    """Plain JSON data (pydantic models dumped); a non-finite number -> None, named in `warnings` by its path."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(exclude_none=True)
    if isinstance(value, dict):
        return {str(k): jsonable(v, f"{where}.{k}" if where else str(k), warnings) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [jsonable(v, f"{where}[{i}]", warnings) for i, v in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        if warnings is not None and not math.isnan(value):  # NaN is Inspect's "not measured": no warning
            warnings.append(f"{where or 'value'} is not finite ({value}): stored as null")
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def solver_task_arg(task_args: dict[str, Any] | None) -> str | None:
    """A solver given as the task's own `solver` argument (as `koblex grid` does), by registry name."""
    solver = (task_args or {}).get("solver")
    if isinstance(solver, dict) and solver.get("type") == "solver" and solver.get("name"):
        return str(solver["name"])
    return None


def judge_model_of(log: EvalLog, role: str) -> str | None:
    bound = (log.eval.model_roles or {}).get(role)
    if bound is None:
        return None
    return getattr(bound, "model", None) or str(bound)


def split_usage(log: EvalLog, judge: str | None, warnings: list[str] | None = None) -> dict[str, Any]:
    """Token usage of the evaluated model and of the judge, from the log's stats."""
    stats = log.stats
    raw = (stats.model_usage if stats else None) or {}
    usage = {k: jsonable(v, f"stats.model_usage.{k}", warnings) for k, v in raw.items()}
    judge_usage = {k: v for k, v in usage.items() if judge and (k == judge or k.endswith("/" + judge))}
    model_usage = {k: v for k, v in usage.items() if k not in judge_usage}
    return {"model": model_usage, "judge": judge_usage}


def provenance(
    log: EvalLog,
    run: RunIdentity,
    coverage: Coverage,
    placement: Placement,
    table: ScoreTable,
    replay: bool,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """The run's record; non-finite numbers become null and are named in `warnings`."""
    ev, meta = log.eval, run.metadata
    solver_args = dict(ev.solver_args or {})
    method = meta.get("method") or solver_args.get("method")
    judge_model = judge_model_of(log, run.spec.judge_role)
    variants = [f"{label}={meta.get(key)}" for key, label in run.spec.variants.items()]
    record = {
        "model": ev.model,
        "solver": ev.solver or solver_task_arg(ev.task_args_passed) or "(task default)",
        "solver_args": solver_args,
        "task": run.spec.task,
        "task_version": ev.task_version,
        "task_args": ev.task_args_passed or {},
        "dataset": {
            "source": meta.get("dataset_source"),
            "fingerprint": run.fingerprint,
            "size": run.dataset_size,
            "samples_in_log": len(coverage.sample_ids),
            "epochs": coverage.epochs,
        },
        "corpus": placement.corpus,
        "retrieval": None if replay else meta.get("retrieval"),
        "scoring": ", ".join(variants),
        "prompts": {k: sorted(v) for k, v in sorted(table.prompts.items())},
        "judge_model": judge_model,
        "judges": {name: tally.as_dict() for name, tally in table.judges.items()},
        "versions": ev.packages or {},
        "usage": split_usage(log, judge_model, warnings),
        "date": ev.created,
        "eval_id": ev.eval_id,
        "replay": {"file": meta.get("replay_file"), "method": method} if replay else None,
        "git": ev.revision or None,
    }
    return {key: jsonable(value, key, warnings) for key, value in record.items()}


def default_name(log: EvalLog, run: RunIdentity) -> str:
    """`<model> · <method or solver>`, the name a run gets unless the submitter gives one (escaped, clipped)."""
    method = run.metadata.get("method") or (log.eval.solver_args or {}).get("method")
    return clip_name(printable(f"{log.eval.model} · {method or log.eval.solver or 'default solver'}"))
