"""Which benchmark a log belongs to, and whether it is a run of a task version and scorers we know."""

from dataclasses import dataclass
from typing import Any

from inspect_ai.log import EvalLog

from koblex_tasks.logs.rejection import Problems
from koblex_tasks.spec import BenchmarkSpec
from koblex_tasks.tasks import benchmark_specs, spec_for_task


@dataclass(frozen=True)
class RunIdentity:
    """The facts of a log's header that decide whether and how it is judged."""

    spec: BenchmarkSpec
    metadata: dict[str, Any]
    scorer_names: list[str]
    fingerprint: str | None
    dataset_size: int | None


def identify(log: EvalLog, problems: Problems) -> RunIdentity:
    """The spec of the log's task and its header facts; problems are added, an unknown task stops here."""
    ev = log.eval
    if log.status != "success":
        err = f" ({log.error.message.splitlines()[0][:200]})" if log.error and log.error.message else ""
        problems.add(f"the eval did not finish successfully: status {log.status!r}{err}")
    task = ev.task_registry_name or ev.task
    spec = spec_for_task(str(task))
    if spec is None or spec.task != task:
        known = " or ".join(s.task for s in benchmark_specs())
        raise problems.reject(f"task {ev.task!r} is not a leaderboard task ({known})")
    meta = dict(ev.metadata or {})
    if str(ev.task_version) not in spec.accepted_versions:
        problems.add(f"unknown task version {ev.task_version!r} (known: {sorted(spec.accepted_versions)})")
    if meta.get("benchmark") not in (None, spec.name):
        problems.add(f"task metadata says benchmark {meta.get('benchmark')!r}, not {spec.name!r}")
    known_scorers = [s.name for s in spec.scorers]
    scorer_names = [s.name for s in (ev.scorers or [])]
    unknown = [s for s in scorer_names if s not in known_scorers]
    if unknown:
        problems.add(f"unknown scorer(s) {unknown} (known for {spec.task}: {sorted(known_scorers)})")
    missing = [s for s in spec.required_scorers if s not in scorer_names]
    if missing:
        problems.add(f"required scorer(s) missing: {missing}")
    if len(set(scorer_names)) != len(scorer_names):
        problems.add(f"a scorer appears more than once: {scorer_names} (rescored with --action append?)")
    fingerprint = meta.get("dataset_fingerprint") or meta.get("dataset_sha256")
    if not fingerprint:
        problems.add("no dataset fingerprint in the task metadata (dataset_fingerprint / dataset_sha256)")
    dataset_size = meta.get("dataset_size")
    if not isinstance(dataset_size, int) or isinstance(dataset_size, bool) or dataset_size < 1:
        problems.add("no dataset_size in the task metadata")
        dataset_size = None
    return RunIdentity(spec, meta, scorer_names, str(fingerprint) if fingerprint else None, dataset_size)
