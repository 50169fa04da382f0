"""The static site and exports; rendering, sorting and escaping checked in headless Chromium when present."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import subprocess
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log

from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.leaderboard.site import script_json
from koblex_tasks.leaderboard.store import Store

CHROMIUM = Path("/usr/bin/chromium")
EVIL_MODEL = "replay/<script>document.title='pwned'</script>"
EVIL_METHOD = "<img src=x onerror=\"document.title='img'\">--></script><!--"
TITLE = "KoBLEX / LEGIT leaderboard"


def chromium(url: str, tmp: Path, *extra: str) -> str:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: install Debian's `chromium` package to run the browser tests")
    cmd = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={tmp / 'chromium-profile'}",
        "--virtual-time-budget=2000",
        *extra,
        url,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def row_names(dom: str, table: int = 0) -> list[str]:
    """System names in row order (the browser adds <tbody> to nested tables, so match the rows themselves)."""
    start = dom.find(f'id="lb-{table}"')
    assert start >= 0, "leaderboard table not rendered"
    end = dom.find(f'id="lb-{table + 1}"')
    rows = re.findall(
        r'<tr data-run="[^"]*"[^>]*>\s*<td class="rank">\d+</td>\s*<td class="name"><details><summary>(.*?)</summary>',
        dom[start : end if end > 0 else None],
        re.S,
    )
    return [html.unescape(n) for n in rows]


# ------------------------------------------------------------------------------------- exports


def test_exports(seeded_site: Path) -> None:
    for name in ("index.html", "leaderboard.json", "leaderboard.csv", "leaderboard.md"):
        assert (seeded_site / name).stat().st_size > 0
    data = json.loads((seeded_site / "leaderboard.json").read_text(encoding="utf-8"))
    [board] = data["boards"]
    assert len(board["runs"]) == 10 and board["n_items"] == 226
    rows = list(csv.DictReader(io.StringIO((seeded_site / "leaderboard.csv").read_text(encoding="utf-8"))))
    overall = [r for r in rows if r["stratum"] == "all" and r["metric"] == "provision_f1"]
    assert len(overall) == 10
    parser = next(r for r in overall if r["name"].endswith("parser"))
    assert (
        float(parser["mean"]) == pytest.approx(0.5941, abs=5e-5)
        and parser["indistinguishable_from_best"] == "True"
    )
    md = (seeded_site / "leaderboard.md").read_text(encoding="utf-8")
    assert "| 1 | replay/gpt-4o · parser | 59.41 [" in md
    page = (seeded_site / "index.html").read_text(encoding="utf-8")
    assert page.count('<tr data-run="') == 10
    assert '<svg class="ci"' in page and "by hops" in page and "<details>" in page


def test_script_json_cannot_close_the_script() -> None:
    text = script_json({"x": "</script><!-- & -->"})
    assert "</" not in text and "<!--" not in text and json.loads(text) == {"x": "</script><!-- & -->"}


@pytest.fixture(scope="module")
def evil_site(replay_logs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("evil")

    def evil(log: EvalLog) -> None:
        log.eval.model = EVIL_MODEL
        log.eval.solver_args = {**(log.eval.solver_args or {}), "method": EVIL_METHOD}
        log.eval.eval_id = "evil"

    bad = tmp / "evil.eval"
    write_eval_log(read_eval_log(str(replay_logs["flare_gpt4o"])), str(bad))
    log = read_eval_log(str(bad))
    evil(log)
    write_eval_log(log, str(bad))
    db = tmp / "evil.sqlite"
    assert leaderboard_main(["submit", "--db", str(db), str(replay_logs["parser_gpt4o"]), str(bad)]) == 0
    with Store(db) as store:
        assert store.counts()["runs"] == 2
    out = tmp / "site"
    assert leaderboard_main(["build", "--db", str(db), "--out", str(out), "--resamples", "200"]) == 0
    return out


def test_names_are_escaped(evil_site: Path) -> None:
    page = (evil_site / "index.html").read_text(encoding="utf-8")
    assert "<script>document.title" not in page and "<img src=x" not in page
    assert html.escape(EVIL_MODEL) in page
    assert page.count("</script>") == 2  # the data block and the sorting code, nothing injected
    assert page.count("<!--") == 0
    md = (evil_site / "leaderboard.md").read_text(encoding="utf-8")
    assert "<script>" not in md and "<img" not in md


# ------------------------------------------------------------------------------------- headless Chromium


def test_page_renders_in_chromium(seeded_site: Path, tmp_path: Path) -> None:
    dom = chromium((seeded_site / "index.html").as_uri(), tmp_path, "--dump-dom")
    assert 'data-ready="1"' in dom, "the page's script did not run"
    names = row_names(dom)
    assert len(names) == 10 and names[0].endswith("parser")
    assert f"<title>{TITLE}</title>" in dom


def test_sorting_in_chromium(seeded_site: Path, tmp_path: Path) -> None:
    url = (seeded_site / "index.html").as_uri()
    dom = chromium(url + "?sort=token_f1&dir=asc", tmp_path, "--dump-dom")
    assert 'data-sorted="token_f1:asc"' in dom
    names = row_names(dom)
    assert names[0].endswith("self_ask") and names[-1].endswith("parser")
    dom = chromium(url + "?sort=provision_em&dir=desc", tmp_path, "--dump-dom")
    names = row_names(dom)
    assert names[0].endswith("parser")
    assert {n.rsplit(" ", 1)[-1] for n in names[-2:]} == {
        "chain_of_thought",
        "standard_prompting",
    }  # unscored last
    dom = chromium(url + "?sort=name&dir=asc", tmp_path, "--dump-dom")
    assert row_names(dom) == sorted(row_names(dom), key=str.lower)


def test_script_in_model_name_not_executed(evil_site: Path, tmp_path: Path) -> None:
    dom = chromium((evil_site / "index.html").as_uri(), tmp_path, "--dump-dom")
    assert f"<title>{TITLE}</title>" in dom and "pwned" not in dom.split("<body")[0]
    assert 'data-ready="1"' in dom
    assert any(EVIL_MODEL in n for n in row_names(dom)), "the name must be shown as text"


def test_screenshot(seeded_site: Path, tmp_path: Path) -> None:
    shot = tmp_path / "board.png"
    chromium(
        (seeded_site / "index.html").as_uri(), tmp_path, f"--screenshot={shot}", "--window-size=1400,1000"
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
