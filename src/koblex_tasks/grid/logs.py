"""What a log directory holds for a grid report: one record per run, read from the log itself.

A record's means, intervals and per-stratum means are the log's own metrics (mean, `bootstrap_ci`, the
grouped means), so every number of the table is the number `inspect view` shows. Per-sample values (for the
paired tests) are read on demand with the leaderboard's score reader.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalScore, list_eval_logs, read_eval_log

from koblex_tasks import stats
from koblex_tasks.grid.plan import grid_for
from koblex_tasks.logs.provenance import judge_model_of
from koblex_tasks.logs.reading import TRANSCRIPT_FIELDS
from koblex_tasks.logs.scores import score_values
from koblex_tasks.scorers.metrics import metric_values
from koblex_tasks.spec import BenchmarkSpec, MethodGrid
from koblex_tasks.tasks import benchmark_specs, spec_for_task

STRATUM_PREFIX = "grouped_"


def log_path(location: str) -> str:
    """A log's location as a resolved local path (Inspect names them as paths or `file://` URIs)."""
    return str(Path(location.removeprefix("file://")).resolve())


def log_locations(log_dir: str | Path) -> list[str]:
    """Every eval log under `log_dir` (recursively, as Inspect lists them), oldest first."""
    if not Path(log_dir).is_dir():
        return []
    infos = sorted(list_eval_logs(str(log_dir)), key=lambda info: info.mtime or 0)
    return [log_path(info.name) for info in infos]


def _number(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


@dataclass(frozen=True)
class Cell:
    """A value key's mean and interval over the run's scored samples (None: nothing scored)."""

    mean: float | None
    low: float | None
    high: float | None
    n: int

    @classmethod
    def of(cls, score: EvalScore) -> Cell:
        m = metric_values(score)
        return cls(
            _number(m.get("mean")),
            _number(m.get("bootstrap_ci_lower")),
            _number(m.get("bootstrap_ci_upper")),
            int(score.scored_samples or 0),
        )


@dataclass(frozen=True)
class RunRecord:
    """One log, as the report needs it."""

    path: str
    spec: BenchmarkSpec
    model: str
    method: str | None  # the grid method key (None: a solver the grid does not know)
    status: str
    created: str
    task_args: dict[str, Any]
    metadata: dict[str, Any]
    samples: int
    cells: dict[str, Cell] = field(default_factory=dict)
    strata: dict[str, dict[str, float | None]] = field(default_factory=dict)  # key -> stratum -> mean
    error: str | None = None
    judge: str | None = None  # the model bound to the benchmark's judge role
    # what the judge read, where it differs from the paper's (`BenchmarkSpec.judge_variant`): {} the paper's
    judge_variant: dict[str, Any] = field(default_factory=dict)

    @property
    def variant_label(self) -> str:
        """The judge variant as `judge_context=none` ('' for the paper's)."""
        return ", ".join(f"{k}={v}" for k, v in self.judge_variant.items())

    @property
    def replay_file(self) -> str | None:
        """The released file a replay log was made from (None for a model's own run)."""
        value = self.metadata.get("replay_file")
        return str(value) if value else None


def solver_steps(log: EvalLog) -> list[tuple[str, dict[str, Any]]]:
    return [(step.solver, dict(step.params or {})) for step in (log.plan.steps if log.plan else [])]


def method_of(log: EvalLog, grid: MethodGrid | None) -> str | None:
    """The grid method a log ran: its `method` metadata, else the solver of its plan and its arguments.

    Inferring from the plan lets the report read logs of plain `inspect eval --solver ...` runs too: of the
    methods run by a solver of the plan, the one whose arguments all match and that names the most wins
    (`one_time_retrieval` with `cot=true` is CoT + one-time retrieval).
    """
    if grid is None:
        return None
    named = (log.eval.metadata or {}).get("method")
    if isinstance(named, str):
        try:
            return grid.method(named).key
        except LookupError:
            if any(row.key == named for table in grid.tables for row in table.rows):
                return named  # a row of one of the paper's other tables (`--table`)
    matching = [
        (len(m.args), m.key)
        for solver, params in solver_steps(log)
        for m in grid.methods
        if m.solver == solver and all(params.get(k) == v for k, v in m.args.items())
    ]
    best = max(matching, key=lambda match: match[0], default=None)
    return best[1] if best else None


def scorer_options(log: EvalLog, name: str) -> dict[str, Any]:
    """The arguments the log's scorer `name` was built with (as the log's header records them)."""
    entry = next((s for s in log.eval.scorers or [] if s.name == name), None)
    return dict((entry.options if entry is not None else None) or {})


def judge_variant_of(log: EvalLog, spec: BenchmarkSpec) -> dict[str, Any]:
    """The judge variant the log's judge scorer was built with (its task arguments when no judge ran), as
    the non-paper settings only, so `-T judge_context=gold` and no argument are the same variant."""
    args = {k: v for k, v in (log.eval.task_args_passed or {}).items() if k in spec.judge_variant_args}
    for scorer in spec.scorers:
        if scorer.judge:
            args |= {
                k: v for k, v in scorer_options(log, scorer.name).items() if k in spec.judge_variant_args
            }
    return spec.judge_variant(args)


def record_of(log: EvalLog, spec: BenchmarkSpec, grid: MethodGrid | None) -> RunRecord:
    ev = log.eval
    cells: dict[str, Cell] = {}
    strata: dict[str, dict[str, float | None]] = {}
    for score in log.results.scores if log.results else []:
        cells[score.name] = Cell.of(score)
        grouped = {
            name.removeprefix(STRATUM_PREFIX): _number(value)
            for name, value in metric_values(score).items()
            if name.startswith(STRATUM_PREFIX)
        }
        if grouped:
            strata[score.name] = grouped
    error = log.error.message.strip().splitlines()[0][:300] if log.error and log.error.message else None
    task_args = {k: v for k, v in (ev.task_args_passed or {}).items() if k != "solver"}
    return RunRecord(
        path=log_path(log.location),
        spec=spec,
        model=str(ev.model),
        method=method_of(log, grid),
        status=str(log.status),
        created=str(ev.created),
        task_args=task_args,
        metadata=dict(ev.metadata or {}),
        samples=int(log.results.completed_samples) if log.results else 0,
        cells=cells,
        strata=strata,
        error=error,
        judge=judge_model_of(log, spec.judge_role),
        judge_variant=judge_variant_of(log, spec),
    )


def read_record(path: str, grids: dict[str, MethodGrid | None] | None = None) -> RunRecord | None:
    """The record of a benchmark log (header only), None for a log of another task."""
    log = read_eval_log(path, header_only=True)
    spec = spec_for_task(str(log.eval.task_registry_name or log.eval.task))
    if spec is None:
        return None
    grid = grid_for(spec) if grids is None else grids.get(spec.name)
    return record_of(log, spec, grid)


def read_records(paths: Iterable[str]) -> list[RunRecord]:
    grids = {s.name: grid_for(s) for s in benchmark_specs()}
    records = [read_record(p, grids) for p in paths]
    return [r for r in records if r is not None]


@dataclass(frozen=True)
class SampleTable:
    """A log's per-sample values: value key -> sample id -> value (mean over epochs; unscored left out)."""

    ids: tuple[str, ...]  # every sample of the log, scored or not
    strata: dict[str, str]  # sample id -> stratum label (the raw group, e.g. "1" for one hop)
    values: dict[str, dict[str, float]]


def sample_table(path: str, spec: BenchmarkSpec) -> SampleTable:
    """Read the log's samples (the leaderboard's score reader checks each value against the spec); their
    transcripts are not read."""
    log = read_eval_log(path, exclude_fields=TRANSCRIPT_FIELDS)
    sums: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    strata: dict[str, str] = {}
    for sample in log.samples or []:
        sid = str(sample.id)
        strata[sid] = str((sample.metadata or {}).get(spec.stratum.key, ""))
        for scorer in spec.scorers:
            score = (sample.scores or {}).get(scorer.name)
            values = score_values(score.value, scorer) if score is not None else None
            if not isinstance(values, dict):
                continue
            for key, value in values.items():
                if value is not None:
                    sums[key][sid].append(value)
    means = {key: {sid: sum(v) / len(v) for sid, v in by_id.items()} for key, by_id in sums.items()}
    return SampleTable(tuple(sorted(strata)), strata, means)


def cells_on(
    table: SampleTable, ids: Iterable[str], spec: BenchmarkSpec
) -> tuple[dict[str, Cell], dict[str, dict[str, float | None]]]:
    """A log's cells and per-stratum means restricted to `ids`, as its own metrics would report them.

    Same engine, resamples and seed as the log metric (`stats.bootstrap_ci`, items in sample-id order), so on
    all of a log's items this gives the log's own numbers.
    """
    wanted = sorted(set(ids))
    cells: dict[str, Cell] = {}
    strata: dict[str, dict[str, float | None]] = {}
    for key, by_id in table.values.items():
        present = [i for i in wanted if i in by_id]
        if not present:
            cells[key] = Cell(None, None, None, 0)
            continue
        ci = stats.bootstrap_ci([by_id[i] for i in present]).intervals[0]
        cells[key] = Cell(ci.mean, ci.low, ci.high, len(present))
        groups: dict[str, list[float]] = defaultdict(list)
        for i in present:
            groups[table.strata.get(i, "")].append(by_id[i])
        means = {g: sum(v) / len(v) for g, v in groups.items()}
        named: dict[str, float | None] = {
            spec.stratum.name_template.format(group_name=g): m for g, m in means.items()
        }
        if spec.stratum.strata_mean_label and means:
            named[spec.stratum.strata_mean_label] = sum(means.values()) / len(means)
        strata[key] = named
    return cells, strata
