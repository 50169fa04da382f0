"""The grid report's data: per model, one row per method (the log's means and intervals, per-stratum means),
each beside the paper's released run of the same method and model family with the paired verdict.

Rows come from the logs only (`grid.logs`); a (model, method) run several times is reported once, from its
latest successful log (the others are named in the notes). Holm's adjustment runs over every paired test of
the report (all models, methods and metrics), so "consistent"/"differs" holds for the grid as a family.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from koblex_tasks import stats
from koblex_tasks.errors import DataError
from koblex_tasks.grid.compare import MetricTest, Replays, Settings, holm, paired_test, verdict
from koblex_tasks.grid.logs import Cell, RunRecord, cells_on, sample_table
from koblex_tasks.grid.plan import match_family
from koblex_tasks.grid.released import ReleasedFiles, ReleasedUnavailable
from koblex_tasks.spec import BenchmarkSpec, MethodGrid, MethodSpec, ModelFamily, ValueSpec
from koblex_tasks.tasks import find_benchmark

# Protocol settings a grid varies on purpose (the method's solver is the row), not reported as deviations.
GRID_VARIES = ("solver",)


@dataclass(frozen=True)
class Released:
    """The released run beside a row: its replayed record and the paired tests, or why there is none."""

    file: str | None = None
    record: RunRecord | None = None  # the replay's log (all of the released file's items)
    tests: tuple[MetricTest, ...] = ()
    reason: str | None = None
    # the released run on the items of the user's run (what the table shows beside it)
    cells: dict[str, Cell] = field(default_factory=dict)
    strata: dict[str, dict[str, float | None]] = field(default_factory=dict)
    n: int = 0

    @property
    def verdict(self) -> str:
        return f"not compared: {self.reason}" if self.reason else verdict(self.tests)


@dataclass(frozen=True)
class Row:
    record: RunRecord
    label: str
    released: Released | None = None  # None: the model has no known family (nothing was released for it)


@dataclass(frozen=True)
class Section:
    model: str
    family: str | None  # the family's label
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class GridReport:
    spec: BenchmarkSpec
    table: str
    columns: tuple[ValueSpec, ...]
    stratum_value: ValueSpec  # the value whose per-stratum means have columns
    strata: tuple[str, ...]
    sections: tuple[Section, ...]
    settings: Settings
    family_size: int  # paired tests under Holm
    compared: bool  # released runs were looked up (the grid declares them and --no-released was not given)
    notes: tuple[str, ...] = ()
    baseline: str | None = None  # one of the paper's other tables: the row (label) every row is paired with

    @property
    def versus(self) -> str:
        """What each row is compared with: the paper's released run, or a table's baseline row."""
        return self.baseline or "paper"

    @property
    def rows(self) -> list[Row]:
        return [row for section in self.sections for row in section.rows]


def own_runs(records: Sequence[RunRecord], spec: BenchmarkSpec) -> list[RunRecord]:
    """The benchmark's runs of a model (not replays of released files)."""
    return [
        r
        for r in records
        if r.spec.name == spec.name and r.replay_file is None and not r.model.startswith("replay/")
    ]


def latest_runs(records: Sequence[RunRecord]) -> tuple[list[RunRecord], list[str]]:
    """One record per (model, method, judge variant): the latest successful, else the latest; notes name the
    others. Runs of one method under two judge variants are two rows (they are not the same run)."""
    chosen: dict[tuple[str, str, str], RunRecord] = {}
    for r in records:
        key = (r.model, r.method or r.path, r.variant_label)
        best = chosen.get(key)
        if best is None or (r.status == "success", r.created) >= (best.status == "success", best.created):
            chosen[key] = r
    kept = {id(r) for r in chosen.values()}
    notes = [
        f"not reported (a later or successful log of the same run is): {r.path}"
        for r in records
        if id(r) not in kept
    ]
    return list(chosen.values()), notes


def ordered(
    records: Sequence[RunRecord], grid: MethodGrid | None, models: Sequence[str] = ()
) -> list[list[RunRecord]]:
    """Records grouped by model (in `models`' order, then by name), methods in the table's order, unknown
    methods last: the same logs always give the same table, whatever order the runs finished in."""
    order = {m.key: k for k, m in enumerate(grid.methods)} if grid else {}
    rank = {m: k for k, m in enumerate(models)}
    by_model: dict[str, list[RunRecord]] = {}
    for r in sorted(records, key=lambda r: (rank.get(r.model, len(rank)), r.model)):
        by_model.setdefault(r.model, []).append(r)
    return [
        sorted(rs, key=lambda r: (r.variant_label, order.get(r.method or "", len(order)), r.path))
        for rs in by_model.values()
    ]


def shown_values(spec: BenchmarkSpec, records: Sequence[RunRecord]) -> tuple[ValueSpec, ...]:
    """The spec's primary values that some record's log reports."""
    return tuple(v for v in spec.values if v.primary and any(v.key in r.cells for r in records))


def strata_of(records: Sequence[RunRecord], spec: BenchmarkSpec, key: str) -> tuple[str, ...]:
    labels = {s for r in records for s in r.strata.get(key, {})}
    return tuple(sorted(labels, key=spec.stratum.sort_key))


def label_of(record: RunRecord, grid: MethodGrid | None) -> str:
    """The row's label: the method's (and the judge variant, when it is not the paper's)."""
    if grid is not None and record.method is not None:
        label = grid.method(record.method).label
    else:
        label = record.method or f"(solver not in the grid) {Path(record.path).name}"
    variant = record.variant_label
    return f"{label} [{variant}]" if variant else label


@dataclass
class ReleasedLookup:
    """Finds and replays the released run of each row; remembers the one-line reason when offline."""

    grid: MethodGrid
    files: ReleasedFiles
    replays: Replays
    notes: list[str]

    def released(self, record: RunRecord, method: MethodSpec, family: ModelFamily) -> Released:
        if record.status != "success":
            return Released(reason="this run did not finish")
        why = self.replays.not_comparable(record)
        if why:
            return Released(reason=why)
        try:
            file = self.files.find(method, family)
        except ReleasedUnavailable as exc:
            if str(exc) not in self.notes:
                self.notes.append(str(exc))
            return Released(reason="released runs unavailable (see notes)")
        except DataError as exc:
            return Released(reason=str(exc))
        if file is None:
            return Released(reason=f"the paper released no {method.label} run for {family.label}")
        try:
            replayed = self.replays.replay(file, record, method.key, family.label)
        except (RuntimeError, ValueError, OSError, LookupError) as exc:
            return Released(
                file.name, reason=f"replay of {file.name} failed: {str(exc).splitlines()[0][:200]}"
            )
        return Released(file.name, replayed)


def scored(cells: dict[str, Cell], key: str) -> bool:
    return key in cells and cells[key].n > 0


def same_judge(value: ValueSpec, mine: RunRecord, theirs: RunRecord) -> bool:
    """A judge-graded value compares only when the same judge graded both runs, reading the same things."""
    if not mine.spec.scorer_of(value.key).judge:
        return True
    return (
        mine.judge is not None and mine.judge == theirs.judge and mine.judge_variant == theirs.judge_variant
    )


def compared_values(columns: Sequence[ValueSpec], mine: RunRecord, released: Released) -> list[ValueSpec]:
    """The values both runs scored on the shared items (judge-graded ones only under the same judge)."""
    theirs = released.record
    if theirs is None:
        return []
    return [
        v
        for v in columns
        if scored(mine.cells, v.key) and scored(released.cells, v.key) and same_judge(v, mine, theirs)
    ]


JUDGE_NOTE = (
    "judge-graded metrics are compared only where the same judge graded the released answers under the same "
    "judge variant (--judge-released MODEL: one judge call per released answer, under each run's variant)"
)


def pair_rows(rows: list[Row], columns: Sequence[ValueSpec], settings: Settings) -> tuple[list[Row], int]:
    """Each row's released run restricted to the row's items, and the paired tests; Holm over all of them."""
    paired: dict[int, Released] = {}
    tests: list[MetricTest] = []
    owners: list[int] = []
    samples = {}
    for k, row in enumerate(rows):
        released = row.released
        if released is None or released.record is None:
            continue
        mine = sample_table(row.record.path, row.record.spec)
        theirs = sample_table(released.record.path, row.record.spec)
        cells, strata = cells_on(theirs, mine.ids, row.record.spec)
        n = len(set(mine.ids) & set(theirs.ids))
        paired[k] = replace(released, cells=cells, strata=strata, n=n)
        samples[k] = (mine, theirs)
    metrics = {k: compared_values(columns, rows[k].record, paired[k]) for k in paired}
    family = sum(len(m) for m in metrics.values())
    n_permutations = stats.family_permutations(max(family, 1), settings.alpha, minimum=settings.n_resamples)
    for k, (mine, theirs) in samples.items():
        for value in metrics[k]:
            a, b = mine.values.get(value.key, {}), theirs.values.get(value.key, {})
            tests.append(paired_test(a, b, value, settings, n_permutations))
            owners.append(k)
    adjusted = holm(tests, settings.alpha)
    out = list(rows)
    for k, released in paired.items():
        own = tuple(t for t, owner in zip(adjusted, owners, strict=True) if owner == k)
        out[k] = replace(out[k], released=replace(released, tests=own))
    return out, sum(1 for t in adjusted if t.tested)


def protocol_notes(records: Sequence[RunRecord]) -> list[str]:
    """The settings in which some run differs from the paper's protocol (as each log records it)."""
    differing: dict[str, set[str]] = {}
    for r in records:
        protocol = r.metadata.get("protocol")
        if isinstance(protocol, dict):
            for name, values in protocol.items():
                paper = values.get("paper") if isinstance(values, dict) else None
                value = values.get("value") if isinstance(values, dict) else values
                if name not in GRID_VARIES:
                    differing.setdefault(f"{name} (paper: {paper})", set()).add(str(value))
    return [
        f"not the paper's protocol: {name} is {', '.join(sorted(values))} in some runs"
        for name, values in sorted(differing.items())
    ]


def corpus_notes(records: Sequence[RunRecord]) -> list[str]:
    partial = [r for r in records if (r.metadata.get("corpus") or {}).get("status") == "partial"]
    if not partial:
        return []
    return [
        f"{len(partial)} run(s) retrieved from a partial statute corpus: scores are not comparable with the "
        "paper's (released runs used the full corpus), so 'differs' is expected where retrieval matters"
    ]


def build_report(
    spec: BenchmarkSpec,
    grid: MethodGrid | None,
    records: Sequence[RunRecord],
    log_dir: str | Path,
    files: ReleasedFiles | None = None,
    settings: Settings | None = None,
    judge_released: str | None = None,
    models: Sequence[str] = (),
) -> GridReport:
    """The report of `records` (the benchmark's logs); `files` None: no released comparison;
    `judge_released`: the judge that grades the released answers too (judge-graded metrics compared);
    `models`: the order of the model sections (default: by name)."""
    settings = settings or Settings()
    runs, notes = latest_runs(own_runs(records, spec))
    groups = ordered(runs, grid, models)
    lookup = None
    benchmark = find_benchmark(spec.task)
    replay = benchmark.replay if benchmark is not None else None
    if grid is not None and grid.released is not None and files is not None and replay is not None:
        replays = Replays.open(grid.released, replay.run, log_dir, judge_released)
        lookup = ReleasedLookup(grid, files, replays, notes)
    rows: list[Row] = []
    families: dict[str, str | None] = {}
    for group in groups:
        family = match_family(group[0].model, grid.families) if grid else None
        families[group[0].model] = family.label if family else None
        for record in group:
            released = None
            method = grid.method(record.method) if grid and record.method else None
            if lookup is not None and family is not None and method is not None and method.released:
                released = lookup.released(record, method, family)
            rows.append(Row(record, label_of(record, grid), released))
    baseline = grid.method(grid.baseline) if grid is not None and grid.baseline else None
    if baseline is not None:
        rows = against_baseline(rows, baseline)
    columns = shown_values(spec, runs)
    rows, family_size = pair_rows(rows, columns, settings)
    stratum_value = spec.value(spec.ranking)
    sections = tuple(
        Section(model, families[model], tuple(r for r in rows if r.record.model == model))
        for model in families
    )
    if any(r.judge for r in runs) and lookup is not None:
        notes.append(JUDGE_NOTE)
    shown = {r.method for r in runs}
    method_notes = [m.note for m in (grid.methods if grid else ()) if m.note and m.key in shown]
    return GridReport(
        spec=spec,
        table=grid.table if grid else spec.title,
        columns=columns,
        stratum_value=stratum_value,
        strata=strata_of(runs, spec, stratum_value.key),
        sections=sections,
        settings=settings,
        family_size=family_size,
        compared=lookup is not None or baseline is not None,
        notes=tuple(
            [*method_notes, *(grid.notes if grid else ()), *protocol_notes(runs), *corpus_notes(runs), *notes]
        ),
        baseline=baseline.label if baseline is not None else None,
    )


def against_baseline(rows: list[Row], baseline: MethodSpec) -> list[Row]:
    """Each row of one of the paper's other tables beside the same model's baseline row (full ParSeR) under the
    same judge variant, so the paired tests and Holm of the report compare every row with it; a model without
    a finished baseline run has its rows uncompared, saying why."""
    base = {
        (r.record.model, r.record.variant_label): r.record
        for r in rows
        if r.record.method == baseline.key and r.record.status == "success"
    }
    out = []
    for row in rows:
        if row.record.method == baseline.key:
            out.append(row)
            continue
        variant = row.record.variant_label
        record = base.get((row.record.model, variant))
        if row.record.status != "success":
            beside = Released(reason="this run did not finish")
        elif record is None:
            under = f" under {variant}" if variant else ""
            beside = Released(reason=f"no finished {baseline.label} run of this model{under}")
        else:
            beside = Released(baseline.label, record)
        out.append(replace(row, released=beside))
    return out
