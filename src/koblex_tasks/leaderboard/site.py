"""Static leaderboard site (one self-contained index.html) and JSON/CSV/Markdown exports of a `board.Site`.

The page is rendered from Jinja2 templates (``templates/``) with autoescaping on, so every string that came
from a log (model names, solver arguments, paths) is HTML-escaped without a call per field, in the table and
in the forest plot's SVG alike (`plot.py` computes its geometry at build time; no script is needed to see it).
The server-rendered order is the board's default ranking (`Board.ranked_runs`), so the page reads right
without JavaScript. The stylesheet and script (``static/``) are inlined and the data is embedded, so the page
works from ``file://``: no server, no network. The script re-ranks (the "Rank by" select, or
``index.html?rank=<metric>``) and sorts (click a column header, or ``?sort=<metric>&dir=asc|desc``). The
embedded JSON escapes ``<``, ``>`` and ``&`` so no ``</script>`` or ``<!--`` can end its script element.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from html import escape as html_escape
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from koblex_tasks.leaderboard.board import (
    UNSCORED_LIMIT,
    Board,
    Column,
    Comparison,
    Interval,
    JudgeInfo,
    Row,
    RunInfo,
    Site,
)
from koblex_tasks.leaderboard.plot import ABSENT, forest, funnel_columns, funnels
from koblex_tasks.leaderboard.safe_write import refuse_symlink, write_atomic
from koblex_tasks.leaderboard.titles import benchmark_notes
from koblex_tasks.text import fmt, md_cell, printable

PACKAGE = "koblex_tasks.leaderboard"
EXPORTS = ("leaderboard.json", "leaderboard.csv", "leaderboard.md")
CI_WIDTH = 120  # px of a CI bar


def script_json(data: Any) -> Markup:
    """JSON safe inside <script>: no `</`, `<!--` or `]]>` can appear (so it is marked safe for the template)."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, sort_keys=True)
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def interval_text(r: Interval, scale: float) -> str:
    return f"{fmt(r.mean, scale)} [{fmt(r.low, scale)}, {fmt(r.high, scale)}]"


def sort_value(row: Row) -> str:
    """The `data-<metric>` attribute the page's script sorts and ranks by: the stored mean at full precision
    (so the script orders exactly as `Board.ranked_runs`); empty = unscored, placed last."""
    return "" if row.mean is None else repr(row.mean)


def rank_rule(board: Board, metric: str | None = None) -> str:
    """The ranking rule in words, for the legend under a board's table (`Board.ranked_runs`)."""
    chain = board.rank_chain(metric)
    if not chain:
        return "No ranked column: runs in submission order."
    first, *rest = chain
    direction = "higher" if first.higher_is_better else "lower"
    then = ", then ".join([c.label for c in rest] + ["submission order"])
    return (
        f"Ranked by {first.label} ({direction} is better); runs with no {first.label} value follow the "
        f"others. Ties, and the runs without it, are ordered by {then}."
    )


def judge_groups(board: Board) -> list[tuple[list[str], JudgeInfo]]:
    """The board's judge-graded columns grouped by who graded them (one note per judge set)."""
    groups: list[tuple[list[str], JudgeInfo]] = []
    for m in board.metrics:
        if m.judge is None:
            continue
        same = next((labels for labels, info in groups if info == m.judge), None)
        if same is None:
            groups.append(([m.label], m.judge))
        else:
            same.append(m.label)
    return groups


def column_domains(board: Board) -> dict[str, tuple[float, float]]:
    """Each column's x-range for its CI bars: the span of all intervals, padded, so bars are comparable."""
    out = {}
    for m in board.metrics:
        lows = [r.low * m.scale for r in m.rows.values() if r.low is not None]
        highs = [r.high * m.scale for r in m.rows.values() if r.high is not None]
        if not lows or not highs:
            out[m.metric] = (0.0, 1.0)
            continue
        lo, hi = min(lows), max(highs)
        pad = 0.05 * ((hi - lo) or 1.0)
        out[m.metric] = (lo - pad, hi + pad)
    return out


class CiBar(NamedTuple):
    """An interval drawn in a column's domain: x positions (px, as written into the SVG) and its label."""

    label: str
    low: str
    high: str
    mean: str


def ci_bar(row: Row, scale: float, domain: tuple[float, float], width: int = CI_WIDTH) -> CiBar | None:
    mean = row.mean
    if mean is None:
        return None
    lo, hi = domain

    def x(v: float | None) -> str:
        v = mean if v is None else v
        return f"{2 + (width - 4) * min(max((v * scale - lo) / ((hi - lo) or 1.0), 0.0), 1.0):.1f}"

    return CiBar(interval_text(row, scale), x(row.low), x(row.high), x(mean))


def by_p(comparisons: Iterable[Comparison]) -> list[Comparison]:
    """Most significant first; untested pairs last."""
    return sorted(comparisons, key=lambda c: (c.p_adjusted is None, c.p_adjusted or 1))


def provenance_fields(run: RunInfo, corpus_applies: bool = True) -> list[tuple[str, Any]]:
    """The rows of a run's provenance table, with what to say when a field is absent.

    Without a retrieval corpus (`Board.corpus_applies` False) the corpus and retrieval rows are left out.
    """
    p = run.provenance
    usage = p.get("usage") or {}
    corpus_rows = [
        ("corpus", p.get("corpus")),
        ("retrieval / index", p.get("retrieval") or "not ours (released predictions)"),
    ]
    return [
        ("run id", f"#{run.run_id}"),
        ("model", p.get("model")),
        ("solver", p.get("solver")),
        ("solver args", p.get("solver_args")),
        ("task", f"{p.get('task')} v{p.get('task_version')}"),
        ("task args", p.get("task_args")),
        ("dataset", p.get("dataset")),
        *(corpus_rows if corpus_applies else []),
        ("scoring", p.get("scoring")),
        ("prompt hashes", p.get("prompts") or "none recorded"),
        ("judge model", p.get("judge_model") or "none"),
        ("judges", p.get("judges") or "none"),
        ("versions", p.get("versions")),
        ("tokens (model)", usage.get("model") or "none recorded"),
        ("tokens (judge)", usage.get("judge") or "none recorded"),
        ("replay", p.get("replay") or "no"),
        ("date", p.get("date")),
        ("eval id", p.get("eval_id")),
    ]


def _structured(value: Any) -> bool:
    return isinstance(value, Mapping | list | tuple)


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1)


def _shown(value: Any) -> Any:
    """Every `{{ x }}`: None renders nothing (not "None"); a plain string from a log has its control and bidi
    characters shown as escapes (`printable`), so a name cannot reorder the page's text around it.
    Markup the templates build themselves passes unchanged."""
    if value is None:
        return ""
    if isinstance(value, str) and not isinstance(value, Markup):
        return printable(value, keep_newlines=True)
    return value


@functools.cache
def environment() -> Environment:
    """The template environment: autoescape for every template, undefined names are errors."""
    env = Environment(
        loader=PackageLoader(PACKAGE, "templates"),
        autoescape=select_autoescape(enabled_extensions=("html.j2", "html"), default=True),
        undefined=StrictUndefined,
        finalize=_shown,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    helpers = (
        fmt,
        sort_value,
        column_domains,
        ci_bar,
        by_p,
        provenance_fields,
        rank_rule,
        judge_groups,
        forest,
        funnels,
        benchmark_notes,
    )
    env.globals |= {f.__name__: f for f in helpers} | {"ci_width": CI_WIDTH}
    env.filters["pretty"] = _pretty
    env.tests["structured"] = _structured
    return env


@functools.cache
def _static(name: str, element: str) -> Markup:
    """A packaged stylesheet or script, inlined as is (trusted text that must not close its element)."""
    text = (resources.files(PACKAGE) / "static" / name).read_text(encoding="utf-8")
    if f"</{element}" in text.lower():
        raise ValueError(f"static/{name} contains </{element}, which would end the inlined element")
    return Markup(text)


def render_html(site: Site, plain: Mapping[str, Any] | None = None) -> str:
    """The page; `plain` is `site.to_dict()` when the caller has it already (it is embedded as data)."""
    s = site.settings
    template = environment().get_template("index.html.j2")
    return template.render(
        site=site,
        settings=s,
        confidence_pct=round(100 * s.confidence),
        exports=[(name, name.rsplit(".", 1)[1].upper()) for name in EXPORTS],
        corpus_note=any(b.corpus_applies for b in site.boards),
        css=_static("site.css", "style"),
        js=_static("site.js", "script"),
        data_json=script_json(site.to_dict() if plain is None else plain),
    )


# ---------------------------------------------------------------------------------------------- Markdown


def coverage_text(row: Row, scale: float) -> str:
    """`unscored 12.5%, scored-only 66.67` (with ⚠ above the limit); empty when every item was scored."""
    if not row.unscored_rate or row.scored_mean is None:
        return ""
    flag = " ⚠" if row.over_unscored_limit else ""
    return f"unscored {100 * row.unscored_rate:.1f}%, scored-only {scale * row.scored_mean:.2f}{flag}"


def _md_result(column: Column, row: Row) -> str:
    mark = ("★ " if row.best else "") + (row.letters or "")
    coverage = coverage_text(row, column.scale)
    return f"{interval_text(row, column.scale)} {mark}".strip() + (f" ({coverage})" if coverage else "")


def render_markdown(site: Site) -> str:
    s = site.settings
    out = [f"# {site.title}", ""]
    out.append(
        f"Mean [95% bootstrap CI] ({s.n_resamples} resamples, seed {s.seed}); ★ = not significantly "
        f"different from the best; letters: compact letter display (Holm, α = {s.alpha}). An unscored item "
        f"counts as the metric's floor (0); the unscored rate and the scored-only mean are given beside it, "
        f"⚠ = more than {100 * UNSCORED_LIMIT:g}% unscored."
    )
    for board in site.boards:
        primary = board.primary
        out += [
            "",
            f"## {md_cell(board.title)}",
            "",
            f"{board.n_items} items. Board key: {html_escape(board.key, quote=False)}.",
        ]
        out += [rank_rule(board), ""]
        out.append("| # | System | " + " | ".join(md_cell(m.label) for m in primary) + " |")
        out.append("|---|---|" + "---|" * len(primary))
        for rank, run in enumerate(board.ranked_runs(), 1):
            cells = [_md_result(m, m.rows[run.run_id]) for m in primary]
            out.append(f"| {rank} | {md_cell(run.name)} | " + " | ".join(cells) + " |")
        out += funnel_markdown(board)
    return "\n".join(out) + "\n"


def funnel_markdown(board: Board) -> list[str]:
    """The board's retrieval funnel as a table (one row per run); "—" where a run did not compute a value."""
    stages, beside = funnel_columns(board)
    if not stages:
        return []
    shown = stages + beside
    out = [
        "",
        "Retrieval funnel (mean [95% CI]; — = not computed by the run, e.g. an older task version):",
        "",
    ]
    out.append("| System | " + " | ".join(md_cell(m.label) for m in shown) + " |")
    out.append("|---|" + "---|" * len(shown))
    for run in board.ranked_runs():
        cells = [
            ABSENT if m.rows[run.run_id].mean is None else interval_text(m.rows[run.run_id], m.scale)
            for m in shown
        ]
        out.append(f"| {md_cell(run.name)} | " + " | ".join(cells) + " |")
    return out


# ---------------------------------------------------------------------------------------------- CSV

CSV_HEADER = (
    "board",
    "run_id",
    "name",
    "model",
    "metric",
    "stratum",
    "mean",
    "ci_low",
    "ci_high",
    "n",
    "unscored_rate",
    "letters",
    "indistinguishable_from_best",
    "scored_only_mean",
    "over_unscored_limit",
)


def _csv_safe(value: Any) -> Any:
    """Keep spreadsheet formulas out: a text cell starting with = + - @ gets a leading quote."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _csv_row(
    board: Board, run: RunInfo, metric: str, stratum: str, r: Interval, n: int, marks: Sequence[Any]
) -> list[Any]:
    """One CSV line: a run's interval for a metric, overall or in one stratum."""
    fields = (board.label, run.run_id, run.name, run.model, metric, stratum, r.mean, r.low, r.high, n)
    return [_csv_safe(x) for x in (*fields, *marks)]


def _blank(value: Any) -> Any:
    return "" if value is None else value


def render_csv(site: Site) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for board in site.boards:
        runs = {r.run_id: r for r in board.runs}
        for m in board.metrics:
            for rid, r in m.rows.items():
                marks = (
                    r.unscored_rate,
                    _blank(r.letters),
                    _blank(r.best),
                    _blank(r.scored_mean),
                    r.over_unscored_limit,
                )
                w.writerow(_csv_row(board, runs[rid], m.metric, "all", r, r.n_scored, marks))
            for s in m.strata:
                stratum = f"{board.stratum_name}={s.stratum}"
                for rid, cell in s.rows.items():
                    w.writerow(_csv_row(board, runs[rid], m.metric, stratum, cell, cell.n, ("",) * 5))
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------- files


def write_site(site: Site, out: str | Path) -> Path:
    """Write index.html and the three exports into ``out``; returns the index.

    Everything is rendered, then written to a fresh temporary folder inside ``out`` (created exclusively) and
    fsynced, and only then renamed into place, back to back: a refusal or a crash while rendering or writing
    leaves the old site whole, never new exports beside an old page. A target that is a symlink is refused
    before anything is replaced.
    """
    if not isinstance(site, Site):  # e.g. its to_dict(): the templates need the model's types and methods
        raise TypeError(f"write_site takes the Site of compute_all(), not a {type(site).__name__}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plain = site.to_dict()
    texts = {
        "leaderboard.json": json.dumps(plain, ensure_ascii=False, allow_nan=False, indent=1),
        "leaderboard.csv": render_csv(site),
        "leaderboard.md": render_markdown(site),
        "index.html": render_html(site, plain),
    }
    staging = Path(tempfile.mkdtemp(prefix=".site-", dir=out))
    try:
        for name, text in texts.items():
            write_atomic(staging, name, text)  # a temp file created exclusively; never written through a link
        for name in texts:
            refuse_symlink(out / name)
        for name in texts:
            os.replace(staging / name, out / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out / "index.html"
