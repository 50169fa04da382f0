"""Leaderboard statistics from the store: per-board intervals, strata, significance; paired comparisons.

The board model (frozen dataclasses below) is the one source of the site and the JSON/CSV/Markdown exports;
`to_dict()` gives its JSON shape. What a benchmark's columns are (labels, display scales, directions, which
carry significance tests, which are 0/1 and compared with McNemar, which a judge graded) and how its items
are stratified come from its registered spec (`koblex_tasks.spec`): this module names no benchmark.

Coverage is part of the score: an item a run left unscored counts as the value's worst (its floor, 0 for F1
and EM), so leaving weak items unscored cannot raise a mean. Each row also carries the scored-only mean and the
unscored rate, and a run above `UNSCORED_LIMIT` is marked. A run that scored no item of a column (a
closed-book method's provision F1) has no mean there: not applicable, not zero.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, cast

import numpy as np

from koblex_tasks import stats as st
from koblex_tasks.leaderboard import titles
from koblex_tasks.leaderboard.store import RunRow, Store
from koblex_tasks.spec import BenchmarkSpec, ValueSpec
from koblex_tasks.stats import Settings  # the one settings value; callers also import it from here
from koblex_tasks.tasks import benchmark_specs, spec_for_task

# `metadata={"json": ...}` of a field: how `to_dict()` writes it when it is None, or never.
OMIT_IF_NONE: Mapping[str, str] = {"json": "omit_if_none"}  # key absent (e.g. letters of an untested column)
EMPTY_IF_NONE: Mapping[str, str] = {"json": "empty_if_none"}  # written as {}
NOT_EXPORTED: Mapping[str, str] = {"json": "skip"}  # display only
UNSCORED_LIMIT = 0.05  # a run leaving more than this share of a column's items unscored is marked


@functools.cache
def _json_fields(cls: type) -> tuple[tuple[str, str | None], ...]:
    """(name, json rule) of a model class's exported fields, looked up once per class."""
    return tuple(
        (f.name, f.metadata.get("json")) for f in dataclasses.fields(cls) if f.metadata.get("json") != "skip"
    )


def to_plain(value: Any) -> Any:
    """JSON-ready data from model objects: dataclasses become dicts (honouring the field rules above)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for name, rule in _json_fields(type(value)):
            v = getattr(value, name)
            if v is None and rule == "omit_if_none":
                continue
            out[name] = {} if v is None and rule == "empty_if_none" else to_plain(v)
        return out
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    return value


class Interval(Protocol):
    """A mean with its interval, as displayed: a column's row or a stratum's cell (None: undefined)."""

    @property
    def mean(self) -> float | None: ...
    @property
    def low(self) -> float | None: ...
    @property
    def high(self) -> float | None: ...


@dataclass(frozen=True)
class Row:
    """One run's interval in one column; letters/best only where the column was tested (primary, 2+ runs)."""

    mean: float | None
    low: float | None
    high: float | None
    n_scored: int
    unscored_rate: float | None  # None: the run did not compute this metric at all
    reason: str | None
    letters: str | None = field(default=None, metadata=OMIT_IF_NONE)
    best: bool | None = field(default=None, metadata=OMIT_IF_NONE)
    scored_mean: float | None = None  # the mean over scored items only (`mean` counts unscored as the floor)
    over_unscored_limit: bool = False  # unscored_rate > UNSCORED_LIMIT: marked on every output


@dataclass(frozen=True)
class StratumCell:
    """One run's interval within one stratum."""

    mean: float | None
    low: float | None
    high: float | None
    n: int


@dataclass(frozen=True)
class StratumRow:
    """One stratum of a column (e.g. the 2-hop questions): its size and every run's interval within it."""

    stratum: str
    n_items: int
    rows: Mapping[int, StratumCell]  # run id -> interval


@dataclass(frozen=True)
class Markings:
    """How the ★ and letters of a tested column were obtained."""

    letters_reason: str | None
    best: str | None
    n_permutations: int
    family: str


# One pair of a column's all-pairs family, as the stats engine returns it (a frozen dataclass: a, b, means,
# difference with its CI, test, p, Holm-adjusted p, significance, McNemar counts, reason).
Comparison = st.PairComparison


@dataclass(frozen=True)
class JudgeInfo:
    """Who graded a judge column: judge models, prompt hashes, and attached audit summaries per model."""

    models: tuple[str, ...]
    prompts: tuple[str, ...]
    audits: Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Column:
    """One metric of a board with every run's interval and, for primary columns, the significance tests."""

    metric: str
    label: str
    scale: float  # stored value x scale = displayed value
    kind: st.MetricKind
    primary: bool
    higher_is_better: bool
    judge: JudgeInfo | None
    rows: Mapping[int, Row]  # run id -> interval, in run order
    markings: Markings | None = field(metadata=EMPTY_IF_NONE)
    comparisons: tuple[Comparison, ...]
    strata: tuple[StratumRow, ...]


@dataclass(frozen=True)
class RunInfo:
    """A run as a board shows it: name, model, dates and its full provenance."""

    run_id: int
    name: str
    model: str
    created: str
    submitted_at: str
    provenance: Mapping[str, Any]

    @classmethod
    def of(cls, run: RunRow) -> RunInfo:
        """The stored run's fields a board shows and exports."""
        return cls(**{f.name: getattr(run, f.name) for f in dataclasses.fields(cls)})


@dataclass(frozen=True)
class Board:
    """Runs sharing benchmark, dataset, corpus completeness and scoring variant: the only ones ranked together.

    `key` is the stored identifier (and `label` the stored short label); `title` is the readable heading built
    from the spec and the board's facts (`titles.board_title`). `rank_by` is the default ranking rule: the
    spec's ranking column, then its other headline columns, then the remaining primary ones (see
    `ranked_runs`).
    """

    key: str
    label: str
    benchmark: str
    corpus_status: str
    subset: bool
    n_items: int
    stratum_name: str  # the spec's stratum label, e.g. "hops"
    strata_sizes: Mapping[str, int]  # in the spec's stratum order
    runs: tuple[RunInfo, ...]
    metrics: tuple[Column, ...]  # primary columns first, then secondary; spec order within each
    title: str
    rank_by: tuple[str, ...]  # metric keys, the default ranking column first
    dataset_note: str | None = field(default=None, metadata=NOT_EXPORTED)
    corpus_applies: bool = field(default=True, metadata=NOT_EXPORTED)  # False: no corpus wording at all
    funnel: tuple[str, ...] = ()  # the funnel's stage columns present on the board (`BenchmarkSpec.funnel`)

    @property
    def primary(self) -> tuple[Column, ...]:
        return tuple(m for m in self.metrics if m.primary)

    @property
    def secondary(self) -> tuple[Column, ...]:
        return tuple(m for m in self.metrics if not m.primary)

    def column(self, metric: str) -> Column:
        for m in self.metrics:
            if m.metric == metric:
                return m
        raise KeyError(
            f"board {self.key!r} has no column {metric!r} (has {[m.metric for m in self.metrics]})"
        )

    def rank_chain(self, metric: str | None = None) -> tuple[Column, ...]:
        """The columns a ranking compares in turn: `metric` (default: `rank_by[0]`), then the rest of `rank_by`."""
        first = metric or (self.rank_by[0] if self.rank_by else None)
        keys = ([first] if first else []) + [k for k in self.rank_by if k != first]
        return tuple(self.column(k) for k in keys)

    def ranked_runs(self, metric: str | None = None) -> list[RunInfo]:
        """Runs ranked by `metric` (default: the benchmark's ranking column), best first.

        The rule: compare runs on the first column of `rank_chain(metric)` in its direction; a run with no
        mean there (e.g. a closed-book method on provision F1) comes after every run that has one; ties and
        unscored runs are ordered by the next column of the chain (the other headline metrics, then the other
        primary columns), and finally by submission order. So a run is never last merely because one column
        is undefined for it.
        """
        chain = self.rank_chain(metric)

        def key(run: RunInfo) -> tuple[tuple[bool, float], ...]:
            out = []
            for col in chain:
                mean = col.rows[run.run_id].mean
                out.append((mean is None, 0.0 if mean is None else (-mean if col.higher_is_better else mean)))
            return tuple(out)

        return sorted(self.runs, key=key)  # stable: submission order breaks full ties

    def to_dict(self) -> dict[str, Any]:
        return cast(dict[str, Any], to_plain(self))


def site_title() -> str:
    """The page title, from the registered benchmarks (not only those with runs yet)."""
    return " / ".join(s.title for s in benchmark_specs()) + " leaderboard"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Site:
    """Every board of a store with the settings they were computed with: what `write_site` renders."""

    settings: Settings
    boards: tuple[Board, ...]
    generated: str = field(default_factory=_now)
    title: str = field(default_factory=site_title, metadata=NOT_EXPORTED)

    def to_dict(self) -> dict[str, Any]:
        return cast(dict[str, Any], to_plain(self))


# ---------------------------------------------------------------------------------------------- specs


def benchmark_spec(benchmark: str) -> BenchmarkSpec:
    """The registered spec of a run's benchmark; a run of an unregistered benchmark cannot be displayed."""
    spec = spec_for_task(benchmark)
    if spec is None:
        known = ", ".join(s.name for s in benchmark_specs()) or "none"
        raise LookupError(f"no benchmark spec is registered for {benchmark!r} (registered: {known})")
    return spec


def columns(spec: BenchmarkSpec) -> tuple[ValueSpec, ...]:
    """A board's columns: primary values first, then secondary ones, each in the spec's order."""
    return tuple(sorted(spec.values, key=lambda v: not v.primary))


# ---------------------------------------------------------------------------------------------- boards


def _matrix(store: Store, runs: list[RunRow], metric: str, items: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(runs x items) scores with NaN = unscored/missing, and a per-run 'has any row for metric' flag."""
    x = np.full((len(runs), len(items)), np.nan)
    present = np.zeros(len(runs), dtype=bool)
    pos = {sid: k for k, sid in enumerate(items)}
    for r, run in enumerate(runs):
        values = store.item_scores(run.run_id).get(metric)
        if values is None:
            continue
        present[r] = True
        for sid, v in values.items():
            if v is not None and sid in pos:
                x[r, pos[sid]] = v
    return x, present


def floored(x: np.ndarray, value: ValueSpec) -> np.ndarray:
    """Unscored items as the value's worst, in every run that scored at least one item of the column."""
    worst = value.low if value.higher_is_better else value.high
    scored_any = (~np.isnan(x)).any(axis=1, keepdims=True)
    return np.where(np.isnan(x) & scored_any, worst, x)


def _judge_info(scorer: str, runs: Sequence[RunRow], audits: Mapping[str, Mapping[str, Any]]) -> JudgeInfo:
    """The judges the runs recorded for `scorer`, with the audit of each (matched with or without provider)."""
    models: set[str] = set()
    prompts: set[str] = set()
    for run in runs:
        info = (run.provenance.get("judges") or {}).get(scorer) or {}
        models |= set(info.get("models") or {})
        prompts |= set(info.get("prompts") or {})
        if not info and run.provenance.get("judge_model"):
            models.add(str(run.provenance["judge_model"]))
    alphas: dict[str, Mapping[str, Any]] = {}
    for m in sorted(models):
        audit = audits.get(m) or next(
            (a for k, a in audits.items() if m.endswith("/" + k) or k.endswith("/" + m)), None
        )
        if audit:
            alphas[m] = audit["summary"]
    return JudgeInfo(models=tuple(sorted(models)), prompts=tuple(sorted(prompts)), audits=alphas)


@dataclass(frozen=True)
class _Data:
    """What every column of a board is computed from."""

    runs: list[RunRow]
    names: list[str]
    items: list[str]
    strata: np.ndarray  # stratum label per item
    settings: Settings


def _rows(
    data: _Data,
    raw: np.ndarray,
    x: np.ndarray,
    present: np.ndarray,
    marks: Mapping[str, tuple[str, bool]],
    intervals: Sequence[st.Interval] | None,
) -> dict[int, Row]:
    """One row per run; `intervals` are the significance tests' own (the same draw), else drawn here.
    `raw` holds the scores as stored (NaN: unscored), `x` the same with unscored items at the floor."""
    s = data.settings
    if intervals is None:
        intervals = st.bootstrap_ci(x, s.n_resamples, s.confidence, s.seed, names=data.names).intervals
    scored = ~np.isnan(raw)
    rows: dict[int, Row] = {}
    for r, (run, ci) in enumerate(zip(data.runs, intervals, strict=True)):
        letters, best = marks.get(run.name, (None, None))
        rate = float(1 - scored[r].mean()) if present[r] else None
        rows[run.run_id] = Row(
            mean=ci.mean,
            low=ci.low,
            high=ci.high,
            n_scored=int(scored[r].sum()),
            unscored_rate=rate,
            reason=ci.reason if present[r] else "not computed by this run",
            letters=letters,
            best=best,
            scored_mean=float(np.mean(raw[r][scored[r]])) if scored[r].any() else None,
            over_unscored_limit=rate is not None and rate > UNSCORED_LIMIT and bool(scored[r].any()),
        )
    return rows


def _significance(
    data: _Data, x: np.ndarray, value: ValueSpec
) -> tuple[
    dict[str, tuple[str, bool]], Markings | None, tuple[Comparison, ...], tuple[st.Interval, ...] | None
]:
    """All pairs (Holm, letters), the best set and the runs' intervals of a primary column (one draw);
    nothing for secondary columns or lone runs."""
    if not value.primary or len(data.runs) < 2:
        return {}, None, (), None
    s = data.settings
    args = (x, data.names, value.kind, s.n_resamples, s.confidence, s.alpha, s.seed)
    pairs, best = st.column_significance(*args, higher_is_better=value.higher_is_better)
    letters = pairs.letters.letters_by_name()
    marks = {name: (letters.get(name, ""), name in best.members) for name in data.names}
    markings = Markings(
        letters_reason=pairs.letters.reason,
        best=best.best,
        n_permutations=pairs.n_permutations,
        family=f"all {len(pairs.comparisons)} pairs of this column (Holm)",
    )
    return marks, markings, pairs.comparisons, pairs.systems


def _strata(data: _Data, x: np.ndarray, spec: BenchmarkSpec) -> tuple[StratumRow, ...]:
    if len(set(data.strata)) < 2:
        return ()
    s = data.settings
    strat = st.stratified_bootstrap_ci(x, data.strata, s.n_resamples, s.confidence, s.seed, names=data.names)
    return tuple(
        StratumRow(
            stratum=str(group.stratum),
            n_items=group.n_items,
            rows={
                run.run_id: StratumCell(mean=ci.mean, low=ci.low, high=ci.high, n=ci.n_items)
                for run, ci in zip(data.runs, group.intervals, strict=True)
            },
        )
        for group in sorted(strat.strata, key=lambda g: spec.stratum.sort_key(str(g.stratum)))
    )


def judge_key(run: RunRow, scorer: str, spec: BenchmarkSpec | None = None) -> str:
    """Who graded a run's `scorer` column and on what: its judge model(s), prompt hash(es) and, when the run
    set one off the paper's protocol, the judge variant (`spec.judge_variant_args`, e.g. the judge's Context
    omitted), so runs judged on different inputs are never ranked in one column."""
    info = (run.provenance.get("judges") or {}).get(scorer) or {}
    models = sorted(info.get("models") or {}) or [str(run.provenance.get("judge_model") or "?")]
    key = " + ".join(models) + " | " + " + ".join(sorted(info.get("prompts") or {}) or ["?"])
    variant = spec.judge_variant(run.provenance.get("task_args")) if spec is not None else {}
    return key + "".join(f" | {k}={v}" for k, v in sorted(variant.items()))


def _column(
    store: Store,
    data: _Data,
    spec: BenchmarkSpec,
    value: ValueSpec,
    audits: Mapping[str, Any],
    graded: Sequence[bool] | None = None,
    suffix: str = "",
) -> Column | None:
    """One column's statistics over the runs `graded` selects (default all); None when none computed it."""
    raw, present = _matrix(store, data.runs, value.key, data.items)
    if graded is not None:
        keep = np.asarray(graded, dtype=bool)
        raw[~keep] = np.nan
        present &= keep
    if not present.any():
        return None
    x = floored(raw, value)
    scorer = spec.scorer_of(value.key)
    marks, markings, comparisons, intervals = _significance(data, x, value)
    judged = [run for run, p in zip(data.runs, present, strict=True) if p]
    rows = _rows(data, raw, x, present, marks, intervals)
    if graded is not None:
        rows = {
            rid: row
            if row.unscored_rate is not None
            else dataclasses.replace(row, reason="graded by another judge")
            for rid, row in rows.items()
        }
    return Column(
        metric=value.key + suffix,
        label=value.label + (f" ({suffix.strip(' @')})" if suffix else ""),
        scale=value.scale,
        kind=value.kind,
        primary=value.primary,
        higher_is_better=value.higher_is_better,
        judge=_judge_info(scorer.name, judged, audits) if scorer.judge else None,
        rows=rows,
        markings=markings,
        comparisons=comparisons,
        strata=_strata(data, x, spec),
    )


def _columns(
    store: Store, data: _Data, spec: BenchmarkSpec, value: ValueSpec, audits: Mapping[str, Any]
) -> list[Column]:
    """A value's column, or for a judge-graded value graded by several judges one column per judge (model
    and prompt hash), so runs graded differently are never ranked, starred or lettered together."""
    scorer = spec.scorer_of(value.key)
    keys = [judge_key(run, scorer.name, spec) for run in data.runs] if scorer.judge else []
    distinct = sorted(set(keys))
    if len(distinct) < 2:
        column = _column(store, data, spec, value, audits)
        return [column] if column is not None else []
    found = []
    for key in distinct:
        graded = [k == key for k in keys]
        column = _column(store, data, spec, value, audits, graded, f" @ {key}")
        if column is not None:
            found.append(column)
    return found


def compute_board(store: Store, board_key: str, settings: Settings = Settings()) -> Board:
    """Statistics for every metric of one board (runs sharing benchmark, dataset, corpus completeness)."""
    runs = store.runs(board_key)
    if not runs:
        raise LookupError(f"no runs on board {board_key!r}")
    first = runs[0]
    spec = benchmark_spec(first.benchmark)
    strata: dict[str, str] = {}
    for run in runs:
        for sid, stratum in store.items(run.run_id).items():
            strata.setdefault(sid, stratum)
    items = sorted(strata)
    labels = np.array([strata[s] for s in items], dtype=object)
    data = _Data(runs, [r.name for r in runs], items, labels, settings)
    audits = store.audits()
    metrics = tuple(m for v in columns(spec) for m in _columns(store, data, spec, v, audits))
    provenances = [r.provenance for r in runs]
    return Board(
        key=board_key,
        label=first.board_label,
        benchmark=first.benchmark,
        corpus_status=first.corpus_status,
        subset=first.subset,
        n_items=len(items),
        stratum_name=spec.stratum.label,
        strata_sizes={
            k: int((labels == k).sum()) for k in sorted(set(strata.values()), key=spec.stratum.sort_key)
        },
        runs=tuple(RunInfo.of(r) for r in runs),
        metrics=metrics,
        title=titles.board_title(spec, board_key, first.corpus_status, len(items), first.subset, provenances),
        rank_by=rank_by(spec, metrics),
        dataset_note=titles.dataset_note(spec, board_key),
        corpus_applies=spec.full_corpus_size is not None,
        funnel=tuple(k for k in spec.funnel if any(m.metric == k for m in metrics)),
    )


def rank_by(spec: BenchmarkSpec, metrics: Sequence[Column]) -> tuple[str, ...]:
    """The default ranking chain: the spec's ranking column, its headline columns, then the other primaries.

    Only columns the board has (some run computed them) take part.
    """
    present = {m.metric for m in metrics}
    keys = [spec.ranking, *spec.headline, *(m.metric for m in metrics if m.primary)]
    return tuple(dict.fromkeys(k for k in keys if k in present))


def board_keys(store: Store) -> list[str]:
    """Full boards first (full corpus, not subsets), then the rest; stable by key."""
    keys = {r.board_key: r for r in store.runs()}
    return sorted(keys, key=lambda k: (keys[k].subset, keys[k].corpus_status != "full", k))


class StoredScoreInvalid(ValueError):
    """A stored score that submission would never have written (the database was edited): the build stops."""


def check_stored_scores(store: Store) -> None:
    """Re-validate every stored score of a value the boards show as submission validated it: NULL (unscored)
    or a finite number within the value's range. SQLite keeps whatever is written into a REAL
    column ("abc" stays text and would average as 0), so an edited row is refused with the run it belongs to."""
    for run in store.runs():
        values = {v.key: v for v in benchmark_spec(run.benchmark).values}
        for sample_id, epoch, metric, value, kind in store.raw_scores(run.run_id):
            spec = values.get(metric)
            where = f"run #{run.run_id} {run.name!r}: stored score {metric}={value!r} of {sample_id!r} (epoch {epoch})"
            if spec is None or kind == "null":  # a value the board does not show; unscored
                continue
            if kind not in ("real", "integer") or not math.isfinite(value):
                raise StoredScoreInvalid(f"{where} is not a finite number (edited database?)")
            if not spec.low <= value <= spec.high:
                raise StoredScoreInvalid(f"{where} is outside [{spec.low}, {spec.high}] (edited database?)")


def compute_all(store: Store, settings: Settings = Settings()) -> Site:
    """Every board of the store (every stored score re-validated first); boards whose titles would read alike
    get a distinguishing suffix."""
    check_stored_scores(store)
    boards = [compute_board(store, k, settings) for k in board_keys(store)]
    unique = titles.distinct_titles([b.title for b in boards], [b.key for b in boards])
    boards = [dataclasses.replace(b, title=t) for b, t in zip(boards, unique, strict=True)]
    return Site(settings=settings, boards=tuple(boards))


# ---------------------------------------------------------------------------------------------- comparisons


@dataclass(frozen=True)
class PairResult:
    """One (a, b, metric) comparison on the items both runs scored, Holm-adjusted over its whole family.

    `bootstrap` is the paired bootstrap of a - b (its CI and p are not adjusted); `test` is the test behind
    the p-value: McNemar for a binary value (with its discordant counts), else a sign-flip permutation test.
    """

    a: RunRow
    b: RunRow
    value: ValueSpec
    bootstrap: st.PairedDifference
    test: st.PairedTest
    p_adjusted: float | None
    significant: bool

    @property
    def test_label(self) -> str:
        name = "McNemar" if self.value.kind == "binary" else "sign-flip"
        return f"{name} ({self.test.method})"

    def to_dict(self) -> dict[str, Any]:
        """The row `koblex leaderboard compare` prints and its --json writes (b01/b10 for binary values only)."""
        boot, v = self.bootstrap, self.value
        row: dict[str, Any] = {
            "a": self.a.name,
            "b": self.b.name,
            "a_id": self.a.run_id,
            "b_id": self.b.run_id,
        }
        row |= {"metric": v.key, "label": v.label, "scale": v.scale, "kind": v.kind}
        row |= {
            k: getattr(boot, k) for k in ("n_shared", "mean_a", "mean_b", "difference", "ci_low", "ci_high")
        }
        row |= {"bootstrap_p": boot.p_value, "reason": boot.reason}
        row |= {"test": self.test_label, "p_value": self.test.p_value}
        if v.kind == "binary":
            row |= {"b01": self.test.b01, "b10": self.test.b10}
        return row | {"p_adjusted": self.p_adjusted, "significant": self.significant}


@dataclass(frozen=True)
class ComparisonFamily:
    """Every comparison `compare_runs` made: one Holm family."""

    settings: Settings
    comparisons: tuple[PairResult, ...]

    @property
    def family_size(self) -> int:
        """The comparisons with a p-value (those Holm adjusted over)."""
        return sum(c.test.p_value is not None for c in self.comparisons)

    def to_dict(self) -> dict[str, Any]:
        """{"settings", "family_size", "comparisons": [PairResult.to_dict(), ...]}: the CLI's JSON."""
        return {
            "settings": dataclasses.asdict(self.settings),
            "family_size": self.family_size,
            "comparisons": [c.to_dict() for c in self.comparisons],
        }


def _paired(
    value: ValueSpec, va: np.ndarray, vb: np.ndarray, s: Settings
) -> tuple[st.PairedDifference, st.PairedTest]:
    """The paired bootstrap of a - b and the test of the value's kind (not yet adjusted)."""
    boot = st.paired_bootstrap(va, vb, s.n_resamples, s.confidence, s.seed)
    if value.kind == "binary":
        return boot, st.mcnemar(va, vb)
    return boot, st.paired_permutation_test(va, vb, s.n_resamples, s.seed)


def compare_runs(
    store: Store,
    pairs: list[tuple[RunRow, RunRow]],
    metrics: list[str] | None = None,
    settings: Settings = Settings(),
) -> ComparisonFamily:
    """Paired tests for each (a, b) pair and metric on the items both scored; Holm over all of them.

    Continuous metrics: paired bootstrap CI of the difference plus a sign-flip permutation test; binary
    metrics (the spec's kind, e.g. exact match): the same CI plus McNemar. The family for Holm is every
    comparison returned. Metrics default to the primary columns of a's benchmark.
    """
    found: list[PairResult] = []  # not yet adjusted
    for a, b in pairs:
        spec = benchmark_spec(a.benchmark)
        sa, sb = store.item_scores(a.run_id), store.item_scores(b.run_id)
        for metric in metrics or [v.key for v in columns(spec) if v.primary]:
            if metric not in sa or metric not in sb:
                continue
            ids = sorted(set(sa[metric]) | set(sb[metric]))
            va = np.array([np.nan if sa[metric].get(i) is None else sa[metric][i] for i in ids])
            vb = np.array([np.nan if sb[metric].get(i) is None else sb[metric][i] for i in ids])
            value = spec.value(metric)
            found.append(PairResult(a, b, value, *_paired(value, va, vb, settings), None, False))
    decisions = st.holm_where_defined([c.test.p_value for c in found], settings.alpha)
    family = tuple(
        c if d is None else dataclasses.replace(c, p_adjusted=d[0], significant=d[1])
        for c, d in zip(found, decisions, strict=True)
    )
    return ComparisonFamily(settings, family)
