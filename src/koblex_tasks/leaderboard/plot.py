"""A board's forest plot as geometry for hand-made SVG (`templates/forest.html.j2`), computed at build time.

For each of the board's ranked columns: one panel with every system's mean and 95% interval over all items,
then one small multiple per stratum (e.g. per hop count) on the same x-axis, so panels of a column compare at
a glance. Each panel is its own SVG in viewBox units (it scales with its container: readable on a phone and
on a desktop); rows follow the board's default ranking, one mark per system (or "n/a" with the reason).
No JavaScript is needed to see it; the page's script only moves rows when the reader re-ranks.

A board with a retrieval funnel (`BenchmarkSpec.funnel`) also gets one funnel per run (`funnels`): the share of
the gold found after each stage as bars on 0-100 %, with their intervals, then the stage scorer's other values;
a run without the funnel (an older task version) shows "—" with the reason, never an empty bar read as 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from koblex_tasks.leaderboard.board import Board, Column, Interval, RunInfo, benchmark_spec
from koblex_tasks.text import fmt

WIDTH = 360.0  # viewBox width of a panel
LABEL_WIDTH = 132.0  # system names, right-aligned before the plot area
RIGHT_PAD = 16.0
TOP = 30.0  # the panel's title line above the first row
ROW_HEIGHT = 18.0
AXIS_HEIGHT = 38.0  # tick labels and the axis label under the last row
TARGET_TICKS = 4
MAX_LABEL = 22  # characters of a system name shown; the full name is the row's tooltip
SEPARATORS = (" · ", "/", " ")


class Tick(NamedTuple):
    x: float
    label: str


@dataclass(frozen=True)
class Mark:
    """One system's row in a panel: its label, interval as x positions (low, mean, high) and tooltip text."""

    run_id: int
    y: float  # top of the row
    label: str
    name: str
    xs: tuple[float, float, float] | None  # None: no value ("n/a" with `text` as the reason)
    text: str  # "59.41 [54.95, 63.79]" or why there is no value
    best: bool


@dataclass(frozen=True)
class Panel:
    """One SVG: a title, the column's axis and one row per system; fixed geometry is in module constants."""

    kind: Literal["all", "stratum"]
    metric: str
    title: str
    axis_label: str
    ticks: tuple[Tick, ...]
    marks: tuple[Mark, ...]

    width = WIDTH
    plot_left = LABEL_WIDTH
    plot_right = WIDTH - RIGHT_PAD
    top = TOP
    row_height = ROW_HEIGHT

    @property
    def axis_y(self) -> float:
        return TOP + len(self.marks) * ROW_HEIGHT + 4

    @property
    def height(self) -> float:
        return self.axis_y + AXIS_HEIGHT


@dataclass(frozen=True)
class ForestRow:
    """A column's panels: all items first, then one per stratum on the same axis."""

    metric: str
    panels: tuple[Panel, ...]


@dataclass(frozen=True)
class Forest:
    """The board's plot; `prefix` is the name part every system shares, left out of the row labels."""

    rows: tuple[ForestRow, ...]
    prefix: str


def nice_step(span: float, target: int = TARGET_TICKS) -> float:
    """A 1/2/2.5/5 x 10^k tick step giving about `target` intervals over `span`."""
    raw = span / max(target, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if raw <= m * magnitude * (1 + 1e-9))


def axis(low: float, high: float, target: int = TARGET_TICKS) -> tuple[float, float, list[float]]:
    """The data span widened to whole tick steps, with its ticks."""
    if not high > low:
        low, high = low - 0.5, high + 0.5
    step = nice_step(high - low, target)
    lo, hi = math.floor(low / step + 1e-9) * step, math.ceil(high / step - 1e-9) * step
    n = round((hi - lo) / step)
    return lo, hi, [round(lo + k * step, 10) for k in range(n + 1)]


def tick_label(value: float, step: float) -> str:
    digits = max(0, -math.floor(math.log10(step) + 1e-9)) if step < 1 else (1 if step % 1 else 0)
    return f"{value:.{digits}f}"


def common_prefix(names: Sequence[str]) -> str:
    """The prefix all names share up to a separator (" · ", "/", " "), if each keeps something after it."""
    if len(names) < 2:
        return ""
    first, last = min(names), max(names)  # the prefix all share is the one of the extremes
    size = next((i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), len(first))
    shared = first[:size]
    cut = max((shared.rfind(sep) + len(sep) for sep in SEPARATORS if sep in shared), default=0)
    prefix = shared[:cut]
    return prefix if all(len(n) > len(prefix) for n in names) else ""


def short_label(name: str, prefix: str) -> str:
    """The name without the shared prefix, cut in the middle when longer than `MAX_LABEL`."""
    text = name[len(prefix) :]
    if len(text) <= MAX_LABEL:
        return text
    head = (MAX_LABEL - 1) // 2
    return text[:head] + "…" + text[-(MAX_LABEL - 1 - head) :]


def _intervals(column: Column) -> Iterable[Interval]:
    yield from column.rows.values()
    for stratum in column.strata:
        yield from stratum.rows.values()


def domain(column: Column) -> tuple[float, float]:
    """The displayed span of every interval of the column (overall and per stratum)."""
    ends = [v * column.scale for r in _intervals(column) for v in (r.low, r.mean, r.high) if v is not None]
    return (min(ends), max(ends)) if ends else (0.0, 1.0)


class _Axis(NamedTuple):
    """A column's x-axis: its span in displayed units, ticks and step; `x` maps a value into the plot area."""

    lo: float
    hi: float
    ticks: tuple[float, ...]
    step: float

    def x(self, value: float) -> float:
        left, right = Panel.plot_left, Panel.plot_right
        return round(left + (value - self.lo) / (self.hi - self.lo) * (right - left), 2)


def _mark(
    run: RunInfo, k: int, r: Interval, column: Column, ax: _Axis, prefix: str, best: bool, why: str | None
) -> Mark:
    y, label = TOP + k * ROW_HEIGHT, short_label(run.name, prefix)
    if r.mean is None:
        return Mark(run.run_id, y, label, run.name, None, why or "no value", False)
    s, mean = column.scale, r.mean * column.scale
    low = mean if r.low is None else r.low * s
    high = mean if r.high is None else r.high * s
    xs = (ax.x(low), ax.x(mean), ax.x(high))
    return Mark(run.run_id, y, label, run.name, xs, f"{fmt(mean)} [{fmt(low)}, {fmt(high)}]", best)


def _panel(
    kind: Literal["all", "stratum"], column: Column, title: str, marks: list[Mark], ax: _Axis
) -> Panel:
    direction = "higher" if column.higher_is_better else "lower"
    ticks = tuple(Tick(ax.x(t), tick_label(t, ax.step)) for t in ax.ticks)
    return Panel(kind, column.metric, title, f"{column.label} ({direction} is better)", ticks, tuple(marks))


def forest_row(board: Board, column: Column, order: Sequence[RunInfo], prefix: str) -> ForestRow:
    lo, hi, ticks = axis(*domain(column))
    ax = _Axis(lo, hi, tuple(ticks), ticks[1] - ticks[0] if len(ticks) > 1 else 1.0)
    arrow = "↑" if column.higher_is_better else "↓"
    overall = [
        _mark(run, k, r, column, ax, prefix, bool(r.best), r.reason)
        for k, run in enumerate(order)
        for r in [column.rows[run.run_id]]
    ]
    panels = [_panel("all", column, f"{column.label} {arrow} · all {board.n_items} items", overall, ax)]
    for s in column.strata:
        marks = [
            _mark(run, k, s.rows[run.run_id], column, ax, prefix, False, "no scored items in this stratum")
            for k, run in enumerate(order)
        ]
        title = f"{column.label} · {board.stratum_name} {s.stratum} ({s.n_items} items)"
        panels.append(_panel("stratum", column, title, marks, ax))
    return ForestRow(column.metric, tuple(panels))


def forest(board: Board) -> Forest:
    """The board's forest plot: its ranked columns in ranking order, rows in the default ranking."""
    order = board.ranked_runs()
    prefix = common_prefix([r.name for r in order])
    return Forest(tuple(forest_row(board, c, order, prefix) for c in board.rank_chain()), prefix)


# ---------------------------------------------------------------------------------------------- funnel

FUNNEL_BAR_RIGHT = 280.0  # the bars span plot_left..this; the value text follows
FUNNEL_TOP = 24.0
FUNNEL_GAP = 8.0  # between the stages and the scorer's other values (e.g. guess overlap)
ABSENT = "—"  # a value the run did not compute (e.g. a log of a task version without the funnel): never 0


@dataclass(frozen=True)
class FunnelBar:
    """One stage (or a value beside the stages) of a run's funnel: a bar from 0 to the mean on 0-100 %, its
    interval as a whisker, the value as text; `width` None: the run has no value (drawn as "—", why in `text`)."""

    y: float
    label: str
    width: float | None
    whisker: tuple[float, float] | None
    value: str
    text: str
    stage: bool  # False: a value beside the stages


@dataclass(frozen=True)
class FunnelPanel:
    """One run's funnel as one SVG in viewBox units."""

    run_id: int
    name: str
    bars: tuple[FunnelBar, ...]
    ticks: tuple[Tick, ...]

    width = WIDTH
    plot_left = LABEL_WIDTH
    plot_right = FUNNEL_BAR_RIGHT
    row_height = ROW_HEIGHT

    @property
    def axis_y(self) -> float:
        return (self.bars[-1].y if self.bars else FUNNEL_TOP) + ROW_HEIGHT + 2

    @property
    def height(self) -> float:
        return self.axis_y + 20


def _share_x(value: float) -> float:
    """A share in [0, 1] as an x position on the bar's axis (clamped: a bar never leaves the panel)."""
    return round(LABEL_WIDTH + min(max(value, 0.0), 1.0) * (FUNNEL_BAR_RIGHT - LABEL_WIDTH), 2)


def _funnel_bar(column: Column, row: Interval, reason: str | None, y: float, stage: bool) -> FunnelBar:
    if row.mean is None:
        why = reason or "not computed by this run"
        return FunnelBar(y, column.label, None, None, ABSENT, f"{column.label}: {why}", stage)
    mean = row.mean
    low, high = (mean if row.low is None else row.low), (mean if row.high is None else row.high)
    value = f"{fmt(mean, 100, 1)}%"
    text = f"{column.label}: {fmt(mean, 100, 1)}% [{fmt(low, 100, 1)}, {fmt(high, 100, 1)}]"
    return FunnelBar(y, column.label, _share_x(mean), (_share_x(low), _share_x(high)), value, text, stage)


def funnel_columns(board: Board) -> tuple[tuple[Column, ...], tuple[Column, ...]]:
    """The board's funnel stages in order, and the other columns of the stages' scorer (drawn beside them)."""
    stages = tuple(board.column(k) for k in board.funnel)
    spec = benchmark_spec(board.benchmark)
    scorers = {spec.scorer_of(k).name for k in board.funnel}
    others = {v.key for s in spec.scorers if s.name in scorers for v in s.values} - set(board.funnel)
    return stages, tuple(m for m in board.metrics if m.metric in others)


def funnels(board: Board) -> tuple[FunnelPanel, ...]:
    """One funnel per run (in the board's default ranking): the share of the gold found after each stage,
    then the scorer's other values; empty when the board has no funnel columns."""
    if not board.funnel:
        return ()
    stages, beside = funnel_columns(board)
    ticks = tuple(Tick(_share_x(t / 100), f"{t}") for t in (0, 25, 50, 75, 100))
    panels = []
    for run in board.ranked_runs():
        bars, y = [], FUNNEL_TOP
        for group, is_stage in ((stages, True), (beside, False)):
            if not is_stage and group:
                y += FUNNEL_GAP
            for column in group:
                row = column.rows[run.run_id]
                bars.append(_funnel_bar(column, row, row.reason, y, is_stage))
                y += ROW_HEIGHT
        panels.append(FunnelPanel(run.run_id, run.name, tuple(bars), ticks))
    return tuple(panels)
