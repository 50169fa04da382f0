"""A user's run against the paper's released run of the same method and model family, item by item.

The released file is replayed through the benchmark's task (an ordinary log, model `replay/<family>`, in
`<log dir>/released/`, reused by later reports) with the user's data and scoring arguments, so both logs
score the same items the same way. Per metric, paired on sample ids both logs scored: the bootstrap CI of
the difference (yours - released), a sign-flip permutation test (McNemar for 0/1 metrics), then Holm over
every test of the report. "consistent" means no metric differs after Holm, not that the runs are equal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog

from koblex_tasks import stats
from koblex_tasks.grid.logs import RunRecord, log_locations, log_path, read_records
from koblex_tasks.spec import ReleasedRuns, ValueSpec
from koblex_tasks.stats import Settings  # the one settings value; the grid's callers import it from here
from koblex_tasks.tasks.benchmark import Replayed, ReplayRequest

REPLAY_SUBDIR = "released"


@dataclass(frozen=True)
class MetricTest:
    """One metric of one pair: the engine's comparison of yours (a) with the released run (b)."""

    value: ValueSpec
    comparison: stats.PairComparison

    @property
    def tested(self) -> bool:
        return self.comparison.p_value is not None


def aligned(a: Mapping[str, float], b: Mapping[str, float]) -> tuple[list[float], list[float]]:
    """Both runs' values over the union of their sample ids (sorted), NaN where a run has no value."""
    ids = sorted(set(a) | set(b))
    return [a.get(i, math.nan) for i in ids], [b.get(i, math.nan) for i in ids]


def paired_test(
    a: Mapping[str, float],
    b: Mapping[str, float],
    value: ValueSpec,
    settings: Settings,
    n_permutations: int,
    names: tuple[str, str] = ("yours", "released"),
) -> MetricTest:
    """CI of the difference and the paired test of one metric on the items both runs scored: the
    leaderboard's engine (`stats.all_pairs` on the two runs), so the numbers equal `koblex leaderboard
    compare`; Holm over the whole report is applied afterwards (`holm`)."""
    pairwise = stats.all_pairs(
        aligned(a, b),
        names,
        metric_kind=value.kind,
        n_resamples=settings.n_resamples,
        alpha=settings.alpha,
        seed=settings.seed,
        higher_is_better=value.higher_is_better,
        n_permutations=n_permutations,
    )
    return MetricTest(value, pairwise.comparisons[0])


def holm(tests: Sequence[MetricTest], alpha: float) -> list[MetricTest]:
    """Holm's adjustment over every test with a p-value (replacing each pair's own, a family of one)."""
    decisions = stats.holm_where_defined([t.comparison.p_value for t in tests], alpha)
    return [
        t if d is None else replace(t, comparison=replace(t.comparison, p_adjusted=d[0], significant=d[1]))
        for t, d in zip(tests, decisions, strict=True)
    ]


def verdict(tests: Sequence[MetricTest]) -> str:
    """`reproduction consistent (n=226)`, `differs: Provision F1 -3.21 (p = 0.004)`, or why untested."""
    differing = [t for t in tests if t.comparison.significant]
    if differing:
        parts = [
            f"{t.value.label} {(t.comparison.difference or 0.0) * t.value.scale:+.2f} "
            f"(p = {t.comparison.p_adjusted:.3g})"
            for t in differing
        ]
        return "differs: " + "; ".join(parts)
    tested = [t for t in tests if t.tested]
    if not tested:
        reasons = sorted({t.comparison.reason or "no p-value" for t in tests}) or ["no metric in common"]
        return "not tested: " + "; ".join(reasons)
    return f"reproduction consistent (n={max(t.comparison.n_shared for t in tested)})"


@dataclass
class Replays:
    """Released files replayed into `<log dir>/released/`, reusing a finished replay of the same file."""

    source: ReleasedRuns
    run: Callable[[ReplayRequest], Replayed]  # the benchmark's replay (`Benchmark.replay.run`)
    log_dir: Path
    known: list[RunRecord]
    judge: str | None = None  # also judge the released answers with this model (when the runner can)

    @classmethod
    def open(
        cls,
        source: ReleasedRuns,
        run: Callable[[ReplayRequest], Replayed],
        log_dir: str | Path,
        judge: str | None = None,
    ) -> Replays:
        directory = Path(log_dir) / REPLAY_SUBDIR
        known = [r for r in read_records(log_locations(directory)) if r.replay_file]
        return cls(source, run, directory, known, judge if source.judge_arg else None)

    def shared_args(self, run: RunRecord) -> dict[str, Any]:
        return {k: run.task_args[k] for k in self.source.shared_task_args if k in run.task_args}

    def not_comparable(self, run: RunRecord) -> str | None:
        """Why the run cannot be compared with the released runs at all (None: it can)."""
        for name, value in self.source.requires.items():
            if run.task_args.get(name, value) != value:
                return f"the released runs have {name}={value}, this run {name}={run.task_args[name]}"
        return None

    def replay(self, file: Path, run: RunRecord, method: str, model_name: str) -> RunRecord:
        """The replay of `file` with the run's shared task arguments, its answers judged (with `judge`) under
        the run's judge variant, so a judge-graded value compares like with like (reused if one finished)."""
        shared = self.shared_args(run)
        variant = dict(run.judge_variant) if self.judge else {}
        target = str(file.resolve())
        for known in reversed(self.known):
            same_file = known.replay_file is not None and log_path(known.replay_file) == target
            same_args = all(known.task_args.get(k) == v for k, v in shared.items())
            same_judge = known.judge == self.judge and known.judge_variant == variant
            if same_file and same_args and same_judge and known.status == "success":
                return known
        judged: dict[str, Any] = (
            {self.source.judge_arg: self.judge} if self.source.judge_arg and self.judge else {}
        )
        request = ReplayRequest(
            file=target,
            log_dir=str(self.log_dir),
            method=method,
            model_name=model_name,
            judge_variant=variant,
            **shared,
            **judged,
        )
        log: EvalLog = self.run(request).log
        [record] = read_records([log_path(log.location)])
        self.known.append(record)
        return record
