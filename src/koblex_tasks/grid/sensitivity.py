"""How much a judge-graded score depends on what the judge reads (`koblex report lf-eval-sensitivity`).

Input: logs of the same methods scored under different judge variants (the spec's `judge_variant_args`, e.g.
KoBLEX's `judge_context` gold / none / retrieved and `judge_reference`). Each log's judge values are re-derived
from its judge records with the benchmark's own re-derivation (`Benchmark.rederive`: the spec's rules, never
the log's totals); a stored value that disagrees with its record refuses the log. A log's variant is what its
scores recorded, item by item; it must agree with itself and with the scorer's logged arguments.

Output, per method: the mean under each variant with its bootstrap interval, and the paired difference of
every other variant from the reference one (the paper's when present) on the items both scored, with the
leaderboard's paired bootstrap and sign-flip test (`grid.compare.paired_test`), Holm over the report; then,
for each pair of variants, the rank correlation of the methods' means (Kendall's tau and Spearman's rho).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log
from scipy import stats as scipy_stats

from koblex_tasks import stats
from koblex_tasks.errors import RederivationRefused
from koblex_tasks.grid.compare import MetricTest, Settings, holm, paired_test
from koblex_tasks.grid.logs import Cell, RunRecord, log_locations, method_of, read_records, scorer_options
from koblex_tasks.grid.plan import grid_for
from koblex_tasks.logs.reading import TRANSCRIPT_FIELDS
from koblex_tasks.logs.rederivation import same
from koblex_tasks.logs.scores import score_values
from koblex_tasks.spec import BenchmarkSpec, ScorerSpec, ValueSpec
from koblex_tasks.tasks import find_benchmark, spec_for_task

Variant = tuple[tuple[str, Any], ...]  # (argument, value) in the spec's order


class SensitivityRefused(ValueError):
    """Input the report cannot compare (one line, exit 2)."""


def variant_label(variant: Variant) -> str:
    return ", ".join(f"{k}={v}" for k, v in variant)


@dataclass(frozen=True)
class JudgedLog:
    """One log's re-derived judge values and what the judge read."""

    path: str
    spec: BenchmarkSpec
    model: str
    method: str
    variant: Variant
    dataset: str | None
    values: dict[str, float]  # sample id -> re-derived value (mean over epochs); unscored left out

    @property
    def system(self) -> tuple[str, str]:
        return (self.model, self.method)


def judge_value(spec: BenchmarkSpec) -> tuple[ScorerSpec, ValueSpec]:
    """The benchmark's judge-graded value whose inputs the variants change (its first judge scorer's)."""
    scorer = next((s for s in spec.scorers if s.judge), None)
    if scorer is None or not spec.judge_variant_args:
        raise SensitivityRefused(f"{spec.title} has no judge-graded value with judge variants")
    return scorer, scorer.values[0]


def _variant_of(spec: BenchmarkSpec, record: Mapping[str, Any]) -> Variant:
    return tuple((k, record.get(k, spec.paper_protocol[k])) for k in spec.judge_variant_args)


def read_judged(path: str | Path) -> JudgedLog:
    """A log's judge values re-derived from its records; refuses a log without them or one that disagrees."""
    where = Path(path).name
    try:
        log = read_eval_log(str(path), exclude_fields=TRANSCRIPT_FIELDS)
    except Exception as exc:  # Inspect raises what its readers raise: a file that is no log is bad input
        raise SensitivityRefused(f"{where}: cannot read the log: {exc}") from exc
    spec = spec_for_task(str(log.eval.task_registry_name or log.eval.task))
    if spec is None:
        raise SensitivityRefused(f"{where}: not a log of a registered benchmark ({log.eval.task})")
    scorer, value = judge_value(spec)
    benchmark = find_benchmark(spec.task)
    rederive = benchmark.rederive.get(scorer.name) if benchmark is not None else None
    if rederive is None:
        raise SensitivityRefused(f"{where}: {spec.title} declares no re-derivation of {value.label}")
    params = scorer_options(log, scorer.name)
    declared = {k: params[k] for k in spec.judge_variant_args if k in params}
    sums: dict[str, list[float]] = {}
    variants: set[Variant] = set()
    for sample in log.samples or []:
        score = (sample.scores or {}).get(scorer.name)
        if score is None:
            continue
        try:
            derived = rederive(sample, score, params).get(value.key)
        except RederivationRefused as exc:
            raise SensitivityRefused(f"{where}: sample {sample.id!r}: {exc}") from exc
        stored = score_values(score.value, scorer)
        logged = stored.get(value.key) if isinstance(stored, dict) else None
        if not same(logged, None if derived is None else float(derived)):
            raise SensitivityRefused(
                f"{where}: sample {sample.id!r}: {value.label} stored {logged!r}, its judge record gives "
                f"{derived!r} (edited log?)"
            )
        if derived is None:
            continue
        variants.add(_variant_of(spec, {**declared, **(score.metadata or {})}))
        sums.setdefault(str(sample.id), []).append(float(derived))
    if not sums:
        raise SensitivityRefused(f"{where}: no {value.label} score with a judge record (was a judge bound?)")
    if len(variants) > 1:
        shown = "; ".join(sorted(variant_label(v) for v in variants))
        raise SensitivityRefused(
            f"{where}: its {value.label} scores were judged under several variants ({shown})"
        )
    [variant] = variants
    wrong = {k: v for k, v in declared.items() if dict(variant)[k] != v}
    if wrong:
        raise SensitivityRefused(f"{where}: the scorer's arguments say {wrong}, its scores {dict(variant)}")
    meta = log.eval.metadata or {}
    method = method_of(log, grid_for(spec)) or str(meta.get("method") or log.eval.solver or "(task default)")
    fingerprint = meta.get("dataset_fingerprint") or meta.get("dataset_sha256")
    return JudgedLog(
        path=str(path),
        spec=spec,
        model=str(log.eval.model),
        method=method,
        variant=variant,
        dataset=str(fingerprint) if fingerprint else None,
        values={sid: sum(v) / len(v) for sid, v in sums.items()},
    )


@dataclass(frozen=True)
class Correlation:
    """The methods' means under two variants, rank-correlated (None: fewer than two methods under both)."""

    a: Variant
    b: Variant
    n_methods: int
    kendall_tau: float | None
    kendall_p: float | None
    spearman_rho: float | None
    spearman_p: float | None


@dataclass(frozen=True)
class MethodRow:
    model: str
    method: str
    cells: dict[Variant, Cell]
    differences: dict[Variant, MetricTest] = field(default_factory=dict)  # variant - reference


@dataclass(frozen=True)
class SensitivityReport:
    value: ValueSpec
    variants: tuple[Variant, ...]  # the reference first
    rows: tuple[MethodRow, ...]
    correlations: tuple[Correlation, ...]
    settings: Settings
    family_size: int

    @property
    def reference(self) -> Variant:
        return self.variants[0]

    def to_dict(self) -> dict[str, Any]:
        s = self.value.scale

        def scaled(x: float | None) -> float | None:
            return None if x is None else x * s

        return {
            "value": self.value.key,
            "variants": [dict(v) for v in self.variants],
            "reference": dict(self.reference),
            "family_size": self.family_size,
            "settings": {"n_resamples": self.settings.n_resamples, "seed": self.settings.seed,
                         "alpha": self.settings.alpha, "confidence": self.settings.confidence},
            "methods": [
                {
                    "model": r.model,
                    "method": r.method,
                    "variants": [
                        {"variant": dict(v), "mean": scaled(c.mean), "ci_low": scaled(c.low),
                         "ci_high": scaled(c.high), "n": c.n}
                        for v, c in r.cells.items()
                    ],
                    "differences": [
                        {"variant": dict(v), "versus": dict(self.reference),
                         "n_shared": t.comparison.n_shared, "difference": scaled(t.comparison.difference),
                         "ci_low": scaled(t.comparison.ci_low), "ci_high": scaled(t.comparison.ci_high),
                         "test": t.comparison.test, "p_value": t.comparison.p_value,
                         "p_adjusted": t.comparison.p_adjusted, "significant": t.comparison.significant,
                         "reason": t.comparison.reason}
                        for v, t in r.differences.items()
                    ],
                }
                for r in self.rows
            ],
            "rank_correlations": [
                {"a": dict(c.a), "b": dict(c.b), "n_methods": c.n_methods, "kendall_tau": c.kendall_tau,
                 "kendall_p": c.kendall_p, "spearman_rho": c.spearman_rho, "spearman_p": c.spearman_p}
                for c in self.correlations
            ],
        }  # fmt: skip


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def correlation(a: Variant, b: Variant, means: Sequence[tuple[float, float]]) -> Correlation:
    """Kendall's tau-b and Spearman's rho of the methods' means under `a` and `b` (scipy)."""
    if len(means) < 2:
        return Correlation(a, b, len(means), None, None, None, None)
    xs, ys = [m[0] for m in means], [m[1] for m in means]
    with warnings.catch_warnings():  # tied means: scipy warns and returns NaN, reported as "undefined"
        warnings.simplefilter("ignore", scipy_stats.ConstantInputWarning)
        tau = scipy_stats.kendalltau(xs, ys)
        rho = scipy_stats.spearmanr(xs, ys)
    return Correlation(
        a,
        b,
        len(means),
        _finite(tau.statistic),
        _finite(tau.pvalue),
        _finite(rho.statistic),
        _finite(rho.pvalue),
    )


def check_inputs(logs: Sequence[JudgedLog], spec_value: ValueSpec) -> tuple[Variant, ...]:
    """The variants to compare (the paper's first when present); refuses what cannot be compared."""
    datasets = {log.dataset for log in logs}
    if len(datasets) > 1:
        raise SensitivityRefused(
            f"the logs are of different datasets ({', '.join(sorted(str(d)[:12] for d in datasets))}): "
            "compare runs on the same questions"
        )
    seen: dict[tuple[str, str, Variant], str] = {}
    for log in logs:
        key = (*log.system, log.variant)
        if key in seen:
            raise SensitivityRefused(
                f"two logs of {log.model} · {log.method} under {variant_label(log.variant)}: "
                f"{Path(seen[key]).name} and {Path(log.path).name} (pass one)"
            )
        seen[key] = log.path
    variants = sorted({log.variant for log in logs}, key=variant_label)
    if len(variants) < 2:
        only = variant_label(variants[0]) if variants else "none"
        raise SensitivityRefused(
            f"every log has the same judge variant ({only}): score the same methods under another one "
            f"to compare {spec_value.label} across variants"
        )
    return tuple(variants)


def build(
    logs: Sequence[JudgedLog], spec: BenchmarkSpec, settings: Settings | None = None
) -> SensitivityReport:
    """The report of already re-derived logs (`read_judged`)."""
    settings = settings or Settings()
    _, value = judge_value(spec)
    variants = check_inputs(logs, value)
    paper = _variant_of(spec, {})
    variants = tuple(sorted(variants, key=lambda v: v != paper))  # the paper's variant is the reference
    reference = variants[0]
    by_system: dict[tuple[str, str], dict[Variant, JudgedLog]] = {}
    for log in logs:
        by_system.setdefault(log.system, {})[log.variant] = log
    pending: list[tuple[int, Variant, Mapping[str, float], Mapping[str, float]]] = []
    rows: list[MethodRow] = []
    for k, (system, runs) in enumerate(sorted(by_system.items())):
        cells = {}
        for v in variants:
            if v in runs:
                ci = stats.bootstrap_ci(list(runs[v].values.values()), settings.n_resamples, settings.confidence,
                                        settings.seed).intervals[0]  # fmt: skip
                cells[v] = Cell(ci.mean, ci.low, ci.high, len(runs[v].values))
        rows.append(MethodRow(*system, cells))
        if reference in runs:
            pending += [(k, v, runs[v].values, runs[reference].values) for v in variants[1:] if v in runs]
    n_permutations = stats.family_permutations(
        max(len(pending), 1), settings.alpha, minimum=settings.n_resamples
    )
    tests = [
        paired_test(a, b, value, settings, n_permutations, (variant_label(v), variant_label(reference)))
        for _, v, a, b in pending
    ]
    adjusted = holm(tests, settings.alpha)
    for (k, v, _, _), test in zip(pending, adjusted, strict=True):
        rows[k].differences[v] = test
    correlations = []
    for i, a in enumerate(variants):
        for b in variants[i + 1 :]:
            means = [(r.cells[a].mean, r.cells[b].mean) for r in rows if a in r.cells and b in r.cells]
            pairs = [(x, y) for x, y in means if x is not None and y is not None]
            correlations.append(correlation(a, b, pairs))
    return SensitivityReport(
        value, variants, tuple(rows), tuple(correlations), settings, sum(1 for t in adjusted if t.tested)
    )


def log_files(paths: Sequence[str | Path]) -> list[str]:
    """The logs to compare: each file as given; for a directory (a grid's log directory), its benchmark logs
    below it, the released runs replayed there included, the latest successful one of each model, method and
    judge variant (a grid re-run leaves the failed attempt beside the finished one)."""
    out: list[str] = []
    for path in paths:
        if not Path(path).is_dir():
            out.append(str(path))
            continue
        latest: dict[tuple[str, str, str], RunRecord] = {}
        for record in read_records(log_locations(path)):
            key = (record.model, record.method or record.path, record.variant_label)
            if record.status == "success" and (key not in latest or record.created >= latest[key].created):
                latest[key] = record
        if not latest:
            raise SensitivityRefused(f"{path}: no finished benchmark log in this directory")
        out += sorted(r.path for r in latest.values())
    return out


def sensitivity_report(paths: Sequence[str | Path], settings: Settings | None = None) -> SensitivityReport:
    """Read, re-derive and compare the logs (all of one benchmark); a directory stands for its logs."""
    logs = [read_judged(p) for p in log_files(paths)]
    benchmarks = sorted({log.spec.title for log in logs})
    if len(benchmarks) > 1:
        raise SensitivityRefused(f"the logs are of different benchmarks ({', '.join(benchmarks)})")
    return build(logs, logs[0].spec, settings)


def _fmt(x: float | None, scale: float, signed: bool = False) -> str:
    if x is None:
        return "–"
    return f"{x * scale:+.2f}" if signed else f"{x * scale:.2f}"


def format_markdown(report: SensitivityReport) -> str:
    """The report as Markdown: a table per method and variant, then the rank correlations."""
    v, s = report.value, report.value.scale
    ref = variant_label(report.reference)
    pct = round(100 * report.settings.confidence)
    out = [
        f"# {v.label} under each judge variant",
        "",
        f"Re-derived from each log's judge records. Mean [{pct}% bootstrap CI] per method and variant; Δ = the "
        f"variant minus the reference ({ref}) on the items both scored, paired bootstrap CI, sign-flip test, "
        f"Holm over the report's {report.family_size} tests (α = {report.settings.alpha}).",
        "",
        "| Method | Variant | n | Mean [CI] | Δ vs reference [CI] | p (Holm) |",
        "|---|---|---|---|---|---|",
    ]
    for row in report.rows:
        name = row.method if len({r.model for r in report.rows}) == 1 else f"{row.model} · {row.method}"
        for variant in report.variants:
            cell = row.cells.get(variant)
            if cell is None:
                out.append(f"| {name} | {variant_label(variant)} | 0 | not run | | |")
                continue
            t = row.differences.get(variant)
            diff, p = ("reference", "") if variant == report.reference else ("–", "")
            if t is not None:
                c = t.comparison
                diff = (
                    f"{_fmt(c.difference, s, True)} [{_fmt(c.ci_low, s, True)}, {_fmt(c.ci_high, s, True)}]"
                )
                p = "–" if c.p_adjusted is None else f"{c.p_adjusted:.3g}" + (" *" if c.significant else "")
            interval = f"{_fmt(cell.mean, s)} [{_fmt(cell.low, s)}, {_fmt(cell.high, s)}]"
            out.append(f"| {name} | {variant_label(variant)} | {cell.n} | {interval} | {diff} | {p} |")
    out += ["", "Rank correlation of the methods' means between variants:", ""]
    out += ["| Variant A | Variant B | methods | Kendall τ (p) | Spearman ρ (p) |", "|---|---|---|---|---|"]
    for corr in report.correlations:
        tau, rho = (
            _statistic(corr.kendall_tau, corr.kendall_p, corr.n_methods),
            _statistic(corr.spearman_rho, corr.spearman_p, corr.n_methods),
        )
        out.append(
            f"| {variant_label(corr.a)} | {variant_label(corr.b)} | {corr.n_methods} | {tau} | {rho} |"
        )
    return "\n".join(out) + "\n"


def _statistic(value: float | None, p: float | None, n: int) -> str:
    if n < 2:
        return "n/a (fewer than 2 methods under both)"
    if value is None:
        return "undefined (tied means)"
    return f"{value:.3f} (p = {'–' if p is None else f'{p:.3g}'})"
