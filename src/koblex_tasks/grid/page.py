"""The grid report as one self-contained HTML page, in the leaderboard's style.

The tables are the Markdown's (`render.section_table`); the plot is the leaderboard's forest plot: panels
built here as `leaderboard.plot.Panel` geometry (the ranked metric over all items with its interval, then one
small multiple per stratum) and drawn by the leaderboard's own `forest_panel` macro with its stylesheet. The
paper's released runs are the grey, dashed marks (the leaderboard's "best" marks, restyled on this page).
"""

from __future__ import annotations

from collections.abc import Sequence

from koblex_tasks.grid.logs import Cell
from koblex_tasks.grid.render import (
    CONFIDENCE_PCT,
    header,
    legend,
    section_table,
    section_title,
    test_rows,
    title_tail,
)
from koblex_tasks.grid.report import GridReport, Section
from koblex_tasks.leaderboard import plot
from koblex_tasks.leaderboard.site import _static, environment
from koblex_tasks.text import fmt

PAPER_LABEL = "↳ paper"
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title>
<style>{{ css }}
svg.fp .fp-mark.best line{stroke:#8c959f;stroke-dasharray:3 2} svg.fp .fp-mark.best circle{fill:#57606a}
tr.paper td{color:#57606a;font-style:italic} td.num{white-space:nowrap}</style></head>
<body class="grid-report">
{% from "forest.html.j2" import forest_panel %}
<h1>{{ title }}</h1>
{% for s in sections %}
<h2 class="board-title">{{ s.title }}</h2>
<div class="frame"><table><thead><tr>{% for h in header %}<th>{{ h }}</th>{% endfor %}</tr></thead><tbody>
{% for line in s.lines %}<tr{% if line.released %} class="paper"{% endif %}>{% for c in line.cells %}<td{% if not loop.first and not loop.last %} class="num"{% endif %}>{{ c }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table></div>
{% if s.panels %}<figure class="forest"><figcaption>{{ s.caption }}</figcaption><div class="fp-column">
{% for p in s.panels %}{{ forest_panel(p) }}{% endfor %}</div></figure>{% endif %}
{% endfor %}
{% if tests|length > 1 %}<h2 class="board-title">Paired tests (yours − released)</h2>
<div class="frame"><table><thead><tr>{% for h in tests[0] %}<th>{{ h }}</th>{% endfor %}</tr></thead><tbody>
{% for row in tests[1:] %}<tr>{% for c in row %}<td>{{ c }}</td>{% endfor %}</tr>{% endfor %}</tbody></table></div>{% endif %}
<ul class="legend">{% for n in notes %}<li>{{ n }}</li>{% endfor %}</ul>
</body></html>
"""


class _Axis:
    """The x-axis of one section's panels: the span of every shown value, in whole tick steps."""

    def __init__(self, values: Sequence[float]) -> None:
        lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
        self.lo, self.hi, ticks = plot.axis(lo, hi)
        step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
        self.ticks = tuple(plot.Tick(self.x(t), plot.tick_label(t, step)) for t in ticks)

    def x(self, value: float) -> float:
        left, right = plot.Panel.plot_left, plot.Panel.plot_right
        return round(left + (value - self.lo) / (self.hi - self.lo) * (right - left), 2)


def _mark(k: int, name: str, cell: Cell | None, scale: float, paper: bool, ax: _Axis) -> plot.Mark:
    """A row of a panel; the paper's released runs use the "best" style (restyled grey on this page) and
    the short label "↳ paper" under the row they belong to (the full name is the row's tooltip)."""
    y, label = plot.TOP + k * plot.ROW_HEIGHT, PAPER_LABEL if paper else plot.short_label(name, "")
    if cell is None or cell.mean is None:
        return plot.Mark(k, y, label, name, None, "not scored", False)
    mean = cell.mean * scale
    low = mean if cell.low is None else cell.low * scale
    high = mean if cell.high is None else cell.high * scale
    text = f"{fmt(mean)} [{fmt(low)}, {fmt(high)}]"
    return plot.Mark(k, y, label, name, (ax.x(low), ax.x(mean), ax.x(high)), text, paper)


Line = tuple[str, dict[str, Cell], dict[str, dict[str, float | None]], bool]


def plotted_lines(section: Section, beside_paper: bool = True) -> list[Line]:
    """(name, cells, stratum means, is the paper's) for the finished runs of a section and their released runs
    (none beside a table's baseline row: it is a row of its own)."""
    lines: list[Line] = []
    for row in section.rows:
        if row.record.status != "success":
            continue
        lines.append((row.label, row.record.cells, row.record.strata, False))
        if beside_paper and row.released and row.released.record:
            lines.append((f"paper: {row.label}", row.released.cells, row.released.strata, True))
    return lines


def forest_panels(report: GridReport, section: Section) -> list[plot.Panel]:
    """The section's forest plot: the ranked metric over the run's items, then its mean per stratum."""
    value, lines = report.stratum_value, plotted_lines(section, report.baseline is None)
    if not lines:
        return []
    scale = value.scale
    ends = [
        v * scale
        for _, cells, _, _ in lines
        for c in [cells.get(value.key)]
        if c is not None
        for v in (c.low, c.mean, c.high)
        if v is not None
    ]
    means = [
        v * scale for _, _, strata, _ in lines for v in strata.get(value.key, {}).values() if v is not None
    ]
    ax = _Axis(ends + means)
    axis_label = f"{value.label} ({'higher' if value.higher_is_better else 'lower'} is better)"
    overall = [
        _mark(k, name, cells.get(value.key), scale, paper, ax)
        for k, (name, cells, _, paper) in enumerate(lines)
    ]
    panels = [
        plot.Panel("all", value.key, f"{value.label} · the runs' items", axis_label, ax.ticks, tuple(overall))
    ]
    for stratum in report.strata:
        marks = tuple(
            _mark(k, name, Cell(strata.get(value.key, {}).get(stratum), None, None, 0), scale, paper, ax)
            for k, (name, _, strata, paper) in enumerate(lines)
        )
        title = f"{value.label} · {stratum}"
        panels.append(plot.Panel("stratum", value.key, title, axis_label, ax.ticks, marks))
    return panels


def html_page(report: GridReport) -> str:
    title = f"{report.table}: {title_tail(report)}"
    sections = [
        {
            "title": section_title(report, s),
            "lines": section_table(report, s),
            "panels": forest_panels(report, s),
            "caption": f"Means with {CONFIDENCE_PCT}% intervals (all items) and means by "
            f"{report.spec.stratum.label}; grey dashed: the paper's released run on the same items.",
        }
        for s in report.sections
    ]
    template = environment().from_string(PAGE)
    return template.render(
        title=title,
        css=_static("site.css", "style"),
        header=header(report),
        sections=sections,
        tests=test_rows(report),
        notes=[n for n in [*legend(report), *report.notes] if n],
    )
