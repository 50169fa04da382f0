"""The grid report as text: a rich table per model on the terminal, and the same tables as Markdown.

Both are drawn from one list of cells per section (`section_table`), so the terminal and the Markdown file
cannot disagree. A row of yours is followed by the paper's released run of the same method and family
(replayed on the same items); the last column says whether they differ after Holm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from koblex_tasks import stats
from koblex_tasks.grid.compare import MetricTest
from koblex_tasks.grid.logs import Cell
from koblex_tasks.grid.report import GridReport, Row, Section
from koblex_tasks.text import fmt, md_cell

DASH = "–"
PIPED_WIDTH = 320  # columns of the table when stdout is not a terminal (a file, a pipe, a test)
CONFIDENCE_PCT = round(100 * stats.DEFAULT_CONFIDENCE)  # the logs' intervals and the paired CIs


def cell_text(cell: Cell | None, scale: float) -> str:
    """`59.41 [54.95, 63.79]`; a dash when nothing was scored (e.g. provisions of a closed-book method)."""
    if cell is None or cell.mean is None:
        return DASH
    if cell.low is None or cell.high is None:
        return fmt(cell.mean, scale)
    return f"{fmt(cell.mean, scale)} [{fmt(cell.low, scale)}, {fmt(cell.high, scale)}]"


@dataclass(frozen=True)
class TableLine:
    cells: list[str]
    released: bool  # a line of the paper's released run (drawn dim / in italics)


def header(report: GridReport) -> list[str]:
    metrics = [f"{v.label} [{CONFIDENCE_PCT}% CI]" for v in report.columns]
    strata = [f"{report.stratum_value.label} {s}" for s in report.strata]
    return ["Method", *metrics, *strata, "n", *([f"vs {report.versus} (Holm)"] if report.compared else [])]


def value_cells(
    cells: dict[str, Cell], strata: dict[str, dict[str, float | None]], n: int, report: GridReport
) -> list[str]:
    metrics = [cell_text(cells.get(v.key), v.scale) for v in report.columns]
    by_stratum = strata.get(report.stratum_value.key, {})
    means = [fmt(by_stratum.get(s), report.stratum_value.scale) for s in report.strata]
    return [*metrics, *means, str(n)]


def row_lines(row: Row, report: GridReport) -> list[TableLine]:
    record = row.record
    if record.status != "success":
        status = f"{record.status}: {record.error}" if record.error else record.status
        blanks = [DASH] * (len(report.columns) + len(report.strata))
        return [
            TableLine([f"{row.label} (run {status})", *blanks, str(record.samples), *last(report, "")], False)
        ]
    verdict = row.released.verdict if row.released else DASH
    cells = value_cells(record.cells, record.strata, record.samples, report)
    lines = [TableLine([row.label, *cells, *last(report, verdict)], False)]
    released = row.released
    if released and released.record and report.baseline is None:  # a baseline row is shown as its own row
        theirs = value_cells(released.cells, released.strata, released.n, report)
        lines.append(TableLine([f"↳ paper: {released.file}", *theirs, ""], True))
    return lines


def last(report: GridReport, verdict: str) -> list[str]:
    """The verdict column, when the report compares with released runs."""
    return [verdict] if report.compared else []


def section_title(report: GridReport, section: Section) -> str:
    if section.family:
        return f"{report.table} · {section.model} (family {section.family})"
    unknown = " (not a model family of the paper: no released runs)" if report.compared else ""
    return f"{report.table} · {section.model}{unknown}"


def section_table(report: GridReport, section: Section) -> list[TableLine]:
    return [line for row in section.rows for line in row_lines(row, report)]


def legend(report: GridReport) -> list[str]:
    s = report.settings
    scaled = any(v.scale != 1 for v in report.columns)
    lines = [
        f"Means and {CONFIDENCE_PCT}% bootstrap intervals as the logs report them"
        + (" (proportions ×100)" if scaled else "")
        + f"; {DASH} = not scored (e.g. a method that retrieves nothing has no provision scores)."
    ]
    if report.baseline is not None:
        lines.append(
            f"vs {report.baseline}: each row - the same model's {report.baseline} run on the items both scored, "
            f"sign-flip test (McNemar for 0/1 metrics), Holm over the report's {report.family_size} tests at "
            f"alpha {s.alpha} ({s.n_resamples} resamples, seed {s.seed})."
        )
    elif report.compared:
        lines.append(
            "↳ paper: the paper's released run of the method and model family, replayed and shown on the same "
            "items; vs paper: yours - released on the items both scored, sign-flip test (McNemar for 0/1 "
            f"metrics), Holm over the report's {report.family_size} tests at alpha {s.alpha} "
            f"({s.n_resamples} resamples, seed {s.seed})."
        )
    return lines


def console() -> Console:
    """The terminal, or a wide page when the output is piped (rich would squeeze the table to 80 columns)."""
    probe = Console()
    return Console(soft_wrap=False, width=None if probe.is_terminal else PIPED_WIDTH)


def print_report(report: GridReport, console: Console) -> None:
    for section in report.sections:
        table = Table(title=section_title(report, section), title_justify="left", show_lines=False)
        for k, name in enumerate(header(report)):
            table.add_column(name, justify="left" if k in (0, len(header(report)) - 1) else "right")
        for line in section_table(report, section):
            table.add_row(*line.cells, style="dim italic" if line.released else None)
        console.print(table)
    for text in [*legend(report), *report.notes]:
        if text:
            console.print(text, style="dim", highlight=False)


def md_table(rows: Sequence[Sequence[str]]) -> list[str]:
    head, *body = rows
    lines = ["| " + " | ".join(md_cell(c) for c in head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in body]


def test_rows(report: GridReport) -> list[list[str]]:
    delta = f"Δ [{CONFIDENCE_PCT}% CI]"
    versus = report.baseline or "Released"
    rows = [["Model", "Method", "Metric", "n", "Yours", versus, delta, "Test", "p", "p (Holm)", "Differs"]]
    for row in report.rows:
        for t in row.released.tests if row.released else ():
            rows.append(test_cells(row, t))
    return rows


def test_cells(row: Row, t: MetricTest) -> list[str]:
    c, scale = t.comparison, t.value.scale
    delta = f"{fmt(c.difference, scale)} [{fmt(c.ci_low, scale)}, {fmt(c.ci_high, scale)}]"
    differs = "yes" if c.significant else ("no" if c.p_adjusted is not None else f"not tested: {c.reason}")
    return [
        row.record.model,
        row.label,
        t.value.label,
        str(c.n_shared),
        fmt(c.mean_a, scale),
        fmt(c.mean_b, scale),
        delta,
        c.test or DASH,
        fmt(c.p_value, 1, 4),
        fmt(c.p_adjusted, 1, 4),
        differs,
    ]


def title_tail(report: GridReport) -> str:
    """What the report sets your runs beside."""
    return f"each row beside {report.baseline}" if report.baseline else "your runs beside the paper's"


def markdown(report: GridReport) -> str:
    out = [f"# {report.table}: {title_tail(report)}", ""]
    for section in report.sections:
        out += [f"## {section_title(report, section)}", ""]
        lines = section_table(report, section)
        rows = [header(report)] + [
            [f"*{c}*" if line.released and c else c for c in line.cells] for line in lines
        ]
        out += [*md_table(rows), ""]
    tests = test_rows(report)
    if len(tests) > 1:
        out += [f"## Paired tests (yours - {report.baseline or 'released'})", "", *md_table(tests), ""]
    out += [f"- {text}" for text in [*legend(report), *report.notes] if text]
    return "\n".join(out) + "\n"
