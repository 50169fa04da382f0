"""Static leaderboard site (one self-contained index.html) and JSON/CSV/Markdown exports.

Every string that came from a log (model names, solver arguments, paths) is HTML-escaped; the JSON embedded
in the page escapes ``<``, ``>`` and ``&`` so no ``</script>`` or ``<!--`` can end the script element.
The page works from ``file://``: no server, no network, sorting by a few lines of inline JavaScript
(click a column header, or open ``index.html?sort=<metric>&dir=asc|desc``).
"""

from __future__ import annotations

import csv
import io
import json
import math
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

EXPORTS = ("leaderboard.json", "leaderboard.csv", "leaderboard.md")


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def script_json(data: Any) -> str:
    """JSON safe inside <script>: no `</`, `<!--` or `]]>` can appear."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _fmt(value: float | None, scale: float, digits: int = 2) -> str:
    return "–" if value is None else f"{value * scale:.{digits}f}"


def _p(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def _domain(metric: dict[str, Any]) -> tuple[float, float]:
    """Shared x-range of a column's CI bars: the span of all intervals, padded, so bars are comparable."""
    scale = metric["scale"]
    lows = [r["low"] * scale for r in metric["rows"].values() if r.get("low") is not None]
    highs = [r["high"] * scale for r in metric["rows"].values() if r.get("high") is not None]
    if not lows or not highs:
        return 0.0, 1.0
    lo, hi = min(lows), max(highs)
    pad = 0.05 * ((hi - lo) or 1.0)
    return lo - pad, hi + pad


def ci_svg(row: dict[str, Any], scale: float, lo: float, hi: float, width: int = 120) -> str:
    if row.get("mean") is None:
        return ""

    def x(v: float | None) -> float:
        v = row["mean"] if v is None else v
        return 2 + (width - 4) * min(max((v * scale - lo) / ((hi - lo) or 1.0), 0.0), 1.0)

    label = f"{_fmt(row['mean'], scale)} [{_fmt(row.get('low'), scale)}, {_fmt(row.get('high'), scale)}]"
    return (
        f'<svg class="ci" width="{width}" height="12" viewBox="0 0 {width} 12" role="img" '
        f'aria-label="95% CI {_e(label)}"><line x1="2" y1="6" x2="{width - 2}" y2="6" class="axis"/>'
        f'<line x1="{x(row.get("low")):.1f}" y1="6" x2="{x(row.get("high")):.1f}" y2="6" class="bar"/>'
        f'<circle cx="{x(row["mean"]):.1f}" cy="6" r="3" class="pt"/></svg>'
    )


def _kv_table(pairs: list[tuple[str, Any]]) -> str:
    rows = []
    for k, v in pairs:
        if isinstance(v, dict | list):
            v = json.dumps(v, ensure_ascii=False, sort_keys=True, indent=1)
            cell = f"<pre>{_e(v)}</pre>"
        else:
            cell = _e(v)
        rows.append(f"<tr><th>{_e(k)}</th><td>{cell}</td></tr>")
    return '<table class="prov">' + "".join(rows) + "</table>"


def provenance_html(run: dict[str, Any]) -> str:
    p = run["provenance"]
    usage = p.get("usage") or {}
    return _kv_table(
        [
            ("run id", f"#{run['run_id']}"),
            ("model", p.get("model")),
            ("solver", p.get("solver")),
            ("solver args", p.get("solver_args")),
            ("task", f"{p.get('task')} v{p.get('task_version')}"),
            ("task args", p.get("task_args")),
            ("dataset", p.get("dataset")),
            ("corpus", p.get("corpus")),
            ("retrieval / index", p.get("retrieval") or "not ours (released predictions)"),
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
    )


def _judge_header(judge: dict[str, Any] | None) -> str:
    if not judge:
        return ""
    parts = []
    parts.append("judge: " + (", ".join(_e(m) for m in judge["models"]) or "none"))
    for ref in judge["prompts"]:
        name, _, sha = ref.partition(" sha256:")
        parts.append(f'prompt {_e(name)} <code title="{_e(sha)}">{_e(sha[:12])}</code>')
    for model, summary in (judge.get("audits") or {}).items():
        alpha = summary.get("alpha")
        parts.append(f"α vs lawyers ({_e(model)}): {_e('–' if alpha is None else f'{alpha:.3f}')}")
    if not judge.get("audits"):
        parts.append("no judge audit attached")
    return '<div class="judge">' + "<br>".join(parts) + "</div>"


def _board_html(k: int, board: dict[str, Any]) -> str:
    runs = board["runs"]
    primary = [m for m in board["metrics"] if m["primary"]]
    secondary = [m for m in board["metrics"] if not m["primary"]]
    domains = {m["metric"]: _domain(m) for m in board["metrics"]}
    first = primary[0] if primary else None

    def order_key(run: dict[str, Any]) -> float:
        if first is None:
            return 0.0
        mean = first["rows"][str(run["run_id"])]["mean"]
        return -math.inf if mean is None else mean

    ordered = sorted(runs, key=order_key, reverse=True)
    badges = []
    if board["subset"]:
        badges.append('<span class="badge warn">subset: not comparable with full runs</span>')
    if board["corpus_status"] != "full":
        badges.append(f'<span class="badge warn">{_e(board["corpus_status"])} corpus</span>')
    head = ['<th data-col="rank">#</th>', '<th data-col="name" class="sortable" tabindex="0">System</th>']
    for m in primary:
        arrow = "↑" if m["higher_is_better"] else "↓"
        head.append(
            f'<th data-col="{_e(m["metric"])}" class="sortable num" tabindex="0">{_e(m["label"])} {arrow}'
            f"{_judge_header(m['judge'])}</th>"
        )
    head.append('<th data-col="date" class="sortable" tabindex="0">Date</th>')
    body = []
    for rank, run in enumerate(ordered, 1):
        rid = str(run["run_id"])
        attrs = [
            f'data-run="{_e(rid)}"',
            f'data-name="{_e(run["name"].lower())}"',
            f'data-date="{_e(run["created"])}"',
        ]
        cells = [f'<td class="rank">{rank}</td>']
        cells.append(
            f'<td class="name"><details><summary>{_e(run["name"])}</summary>{provenance_html(run)}</details></td>'
        )
        for m in primary:
            row = m["rows"][rid]
            sort_value = "" if row["mean"] is None else f"{row['mean'] * m['scale']:.6f}"
            attrs.append(f'data-{_e(m["metric"])}="{sort_value}"')
            lo, hi = domains[m["metric"]]
            mark = ""
            if row.get("best"):
                mark += '<span class="best" title="not significantly different from the best (Holm)">★</span>'
            if row.get("letters"):
                mark += f' <span class="letters" title="compact letter display">{_e(row["letters"])}</span>'
            unscored = ""
            if m["judge"] and row.get("unscored_rate") is not None:
                unscored = f'<div class="unscored">unscored {100 * row["unscored_rate"]:.1f}%</div>'
            reason = "" if row["mean"] is not None else f'<div class="unscored">{_e(row.get("reason"))}</div>'
            cells.append(
                f'<td class="num"><span class="mean">{_fmt(row["mean"], m["scale"])}</span> '
                f'<span class="ci-text">[{_fmt(row["low"], m["scale"])}, {_fmt(row["high"], m["scale"])}]</span>'
                f"{mark}<br>{ci_svg(row, m['scale'], lo, hi)}{unscored}{reason}</td>"
            )
        cells.append(f'<td class="date">{_e(str(run["created"])[:10])}</td>')
        body.append(f"<tr {' '.join(attrs)}>{''.join(cells)}</tr>")
    out = [
        f'<section class="board" id="board-{k}"><h2>{_e(board["label"])} {"".join(badges)}</h2>',
        f'<p class="meta">{board["n_items"]} items · strata ({_e(board["stratum_name"])}): '
        + ", ".join(f"{_e(s)}: {n}" for s, n in board["strata_sizes"].items())
        + f" · board key <code>{_e(board['key'])}</code></p>",
        f'<table class="lb" id="lb-{k}"><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>",
        '<p class="legend">Mean [95% percentile-bootstrap CI]. ★ = not significantly different from the best '
        "(Holm over best-vs-others); letters: systems sharing a letter are not significantly different "
        "(Holm over all pairs of the column; sign-flip test, McNemar for exact match).</p>",
    ]
    names = {str(r["run_id"]): r["name"] for r in runs}
    for m in primary + secondary:
        if not m["strata"]:
            continue
        sh = "".join(
            f"<th>{_e(board['stratum_name'])} {_e(s['stratum'])} (n={s['n_items']})</th>" for s in m["strata"]
        )
        rows = []
        for run in ordered:
            rid = str(run["run_id"])
            cells = "".join(
                f'<td class="num">{_fmt(s["rows"][rid]["mean"], m["scale"])} '
                f'<span class="ci-text">[{_fmt(s["rows"][rid]["low"], m["scale"])}, '
                f"{_fmt(s['rows'][rid]['high'], m['scale'])}]</span></td>"
                for s in m["strata"]
            )
            rows.append(f"<tr><td>{_e(names[rid])}</td>{cells}</tr>")
        out.append(
            f'<details class="strata"><summary>{_e(m["label"])} by {_e(board["stratum_name"])}</summary>'
            f'<table class="stratum"><thead><tr><th>System</th>{sh}</tr></thead><tbody>{"".join(rows)}</tbody>'
            "</table></details>"
        )
    for m in primary:
        if not m["comparisons"]:
            continue
        rows = []
        for c in sorted(m["comparisons"], key=lambda c: (c["p_adjusted"] is None, c["p_adjusted"] or 1)):
            rows.append(
                f"<tr><td>{_e(c['system_a'])}</td><td>{_e(c['system_b'])}</td>"
                f'<td class="num">{_fmt(c["difference"], m["scale"])} [{_fmt(c["ci_low"], m["scale"])}, '
                f"{_fmt(c['ci_high'], m['scale'])}]</td><td>{_e(c['test'])}</td>"
                f'<td class="num">{_p(c["p_value"])}</td><td class="num">{_p(c["p_adjusted"])}</td>'
                f"<td>{'yes' if c['significant'] else 'no'}</td></tr>"
            )
        out.append(
            f'<details class="pairs"><summary>{_e(m["label"])}: all pairwise comparisons</summary>'
            '<table class="pairs"><thead><tr><th>A</th><th>B</th><th>A−B [95% CI]</th><th>test</th>'
            "<th>p</th><th>p (Holm)</th><th>significant</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></details>"
        )
    if secondary:
        sh = "".join(f"<th>{_e(m['label'])}</th>" for m in secondary)
        rows = []
        for run in ordered:
            rid = str(run["run_id"])
            cells = "".join(
                f'<td class="num">{_fmt(m["rows"][rid]["mean"], m["scale"])} <span class="ci-text">'
                f"[{_fmt(m['rows'][rid]['low'], m['scale'])}, {_fmt(m['rows'][rid]['high'], m['scale'])}]</span></td>"
                for m in secondary
            )
            rows.append(f"<tr><td>{_e(run['name'])}</td>{cells}</tr>")
        out.append(
            '<details class="secondary"><summary>Secondary metrics</summary><table class="stratum"><thead><tr>'
            f"<th>System</th>{sh}</tr></thead><tbody>{''.join(rows)}</tbody></table></details>"
        )
    out.append("</section>")
    return "\n".join(out)


CSS = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0}
th,td{border-bottom:1px solid #ddd;padding:.3rem .5rem;vertical-align:top;text-align:left}
th.sortable{cursor:pointer;user-select:none} th.sorted-asc::after{content:" ▲"} th.sorted-desc::after{content:" ▼"}
td.num,th.num{text-align:right} .ci-text,.meta,.legend,.judge,.unscored{color:#666;font-size:.8em}
.judge{font-weight:normal;max-width:16rem} .best{color:#b8860b;margin-left:.2em} .letters{font-family:monospace}
svg.ci .axis{stroke:#ddd;stroke-width:1} svg.ci .bar{stroke:#1f6feb;stroke-width:3} svg.ci .pt{fill:#0a3069}
table.prov th{font-weight:normal;color:#555} table.prov pre{margin:0;font-size:.75em;white-space:pre-wrap;max-width:40rem}
.badge{font-size:.6em;padding:.1em .4em;border-radius:.3em;background:#eee;margin-left:.5em}
.badge.warn{background:#fff3cd} details summary{cursor:pointer} nav a{margin-right:1em}
"""

JS = r"""
(function () {
  function key(tr, col) {
    var v = tr.getAttribute('data-' + col);
    if (v === null || v === '') return null;
    var n = parseFloat(v);
    return (col === 'name' || col === 'date' || isNaN(n)) ? v : n;
  }
  function sortTable(table, col, dir) {
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    rows.sort(function (a, b) {
      var x = key(a, col), y = key(b, col);
      if (x === null && y === null) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      var c = x < y ? -1 : (x > y ? 1 : 0);
      return dir === 'asc' ? c : -c;
    });
    rows.forEach(function (r, i) { tbody.appendChild(r); r.cells[0].textContent = String(i + 1); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.classList.remove('sorted-asc', 'sorted-desc');
      if (th.getAttribute('data-col') === col) th.classList.add('sorted-' + dir);
    });
    table.setAttribute('data-sorted', col + ':' + dir);
  }
  document.querySelectorAll('table.lb').forEach(function (table) {
    table.tHead.querySelectorAll('th.sortable').forEach(function (th) {
      function go() {
        var col = th.getAttribute('data-col');
        var cur = table.getAttribute('data-sorted') || '';
        var def = (col === 'name' || col === 'date') ? 'asc' : 'desc';
        var dir = cur === col + ':' + def ? (def === 'asc' ? 'desc' : 'asc') : def;
        sortTable(table, col, dir);
      }
      th.addEventListener('click', go);
      th.addEventListener('keydown', function (ev) { if (ev.key === 'Enter') go(); });
    });
  });
  var params = new URLSearchParams(window.location.search);
  var col = params.get('sort');
  if (col) {
    var dir = params.get('dir') === 'asc' ? 'asc' : 'desc';
    document.querySelectorAll('table.lb').forEach(function (table) {
      if (table.tHead.querySelector('th[data-col="' + col.replace(/[^A-Za-z0-9_]/g, '') + '"]')) {
        sortTable(table, col, dir);
      }
    });
  }
  document.body.setAttribute('data-ready', '1');
})();
"""


def render_html(data: dict[str, Any]) -> str:
    generated = data.get("generated", "")
    s = data["settings"]
    nav = " ".join(f'<a href="{_e(name)}">{_e(name.rsplit(".", 1)[1].upper())}</a>' for name in EXPORTS)
    boards = (
        "\n".join(_board_html(k, b) for k, b in enumerate(data["boards"])) or "<p>No submissions yet.</p>"
    )
    toc = "".join(f'<li><a href="#board-{k}">{_e(b["label"])}</a></li>' for k, b in enumerate(data["boards"]))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>KoBLEX / LEGIT leaderboard</title>
<style>{CSS}</style></head>
<body>
<h1>KoBLEX / LEGIT leaderboard</h1>
<nav>Exports: {nav}</nav>
<p class="meta">Generated {_e(generated)} · {s["n_resamples"]} bootstrap resamples, seed {s["seed"]},
{round(100 * s["confidence"])}% intervals, α = {s["alpha"]}. Boards separate benchmark, dataset fingerprint,
corpus completeness and scoring variant: rows on different boards are never ranked together.</p>
<ul>{toc}</ul>
{boards}
<script type="application/json" id="leaderboard-data">{script_json(data)}</script>
<script>{JS}</script>
</body></html>
"""


def _md_cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return escape(text, quote=False).replace("|", "\\|").replace("\n", " ")


def render_markdown(data: dict[str, Any]) -> str:
    out = ["# KoBLEX / LEGIT leaderboard", ""]
    s = data["settings"]
    out.append(
        f"Mean [95% bootstrap CI] ({s['n_resamples']} resamples, seed {s['seed']}); ★ = not significantly "
        "different from the best; letters: compact letter display (Holm, α = 0.05)."
    )
    for board in data["boards"]:
        primary = [m for m in board["metrics"] if m["primary"]]
        out += ["", f"## {_md_cell(board['label'])}", "", f"{board['n_items']} items.", ""]
        out.append("| # | System | " + " | ".join(_md_cell(m["label"]) for m in primary) + " |")
        out.append("|---|---|" + "---|" * len(primary))
        first = primary[0] if primary else None

        def key(run: dict[str, Any], first: dict[str, Any] | None = first) -> float:
            mean = first["rows"][str(run["run_id"])]["mean"] if first else None
            return -math.inf if mean is None else mean

        for rank, run in enumerate(sorted(board["runs"], key=key, reverse=True), 1):
            cells = []
            for m in primary:
                r = m["rows"][str(run["run_id"])]
                mark = ("★ " if r.get("best") else "") + (r.get("letters") or "")
                cells.append(
                    f"{_fmt(r['mean'], m['scale'])} [{_fmt(r['low'], m['scale'])}, "
                    f"{_fmt(r['high'], m['scale'])}] {mark}".strip()
                )
            out.append(f"| {rank} | {_md_cell(run['name'])} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _csv_safe(value: Any) -> Any:
    """Keep spreadsheet formulas out: a text cell starting with = + - @ gets a leading quote."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _csv_row(
    board: dict[str, Any],
    run: dict[str, Any],
    rid: str,
    metric: str,
    stratum: str,
    r: dict[str, Any],
    n: Any,
    marks: tuple[Any, Any, Any],
) -> list[Any]:
    """One CSV line: a run's interval for a metric, overall or in one stratum."""
    fields = (
        board["label"],
        rid,
        run["name"],
        run["model"],
        metric,
        stratum,
        r["mean"],
        r["low"],
        r["high"],
        n,
    )
    return [_csv_safe(x) for x in (*fields, *marks)]


def render_csv(data: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
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
        ]
    )
    for board in data["boards"]:
        runs = {str(r["run_id"]): r for r in board["runs"]}
        for m in board["metrics"]:
            for rid, r in m["rows"].items():
                marks = (r["unscored_rate"], r.get("letters", ""), r.get("best", ""))
                w.writerow(_csv_row(board, runs[rid], rid, m["metric"], "all", r, r["n_scored"], marks))
            for s in m["strata"]:
                stratum = f"{board['stratum_name']}={s['stratum']}"
                for rid, r in s["rows"].items():
                    w.writerow(_csv_row(board, runs[rid], rid, m["metric"], stratum, r, r["n"], ("", "", "")))
    return buf.getvalue()


def write_site(data: dict[str, Any], out: str | Path) -> Path:
    """Write index.html and the three exports into ``out``; returns the index path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data = {**data, "generated": data.get("generated") or datetime.now(UTC).isoformat(timespec="seconds")}
    files = {
        "leaderboard.json": json.dumps(data, ensure_ascii=False, allow_nan=False, indent=1),
        "leaderboard.csv": render_csv(data),
        "leaderboard.md": render_markdown(data),
        "index.html": render_html(data),
    }
    for name, text in files.items():
        tmp = out / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out / name)
    return out / "index.html"
