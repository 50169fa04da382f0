"""The static site and exports; rendering, sorting and escaping checked in headless Chromium when present."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import markupsafe
import numpy as np
import pytest
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log

from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.leaderboard.board import Settings, Site, compare_runs, compute_all, compute_board
from koblex_tasks.leaderboard.site import render_csv, render_html, script_json, write_site
from koblex_tasks.leaderboard.store import RunRow, Store
from koblex_tasks.spec import (
    BenchmarkSpec,
    ScorerSpec,
    StratumSpec,
    ValueSpec,
    register_benchmark,
    unregister_benchmark,
)

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
    assert str(markupsafe.escape(EVIL_MODEL)) in page  # the templates' escaping (' is &#39;)
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


# ------------------------------------------------------------------------------------- spec-driven boards

TOY = BenchmarkSpec(
    name="toybench",
    title="Toy",
    task="tests/toybench",
    version="1",
    scorers=(
        ScorerSpec(
            "acc",
            (
                ValueSpec("cost", "Cost <s>", 0.0, 10.0, higher_is_better=False, primary=False),
                ValueSpec("exact", "Exact %", 0.0, 1.0, scale=100, kind="binary"),
            ),
        ),
        ScorerSpec("rubric", (ValueSpec("grade", "Grade", 0.0, 5.0),), judge=True),
    ),
    stratum=StratumSpec("level", "level", order=("low", "high")),
    headline=("exact",),
    ranking="exact",
)
COMPARE_KEYS = ["a", "b", "a_id", "b_id", "metric", "label", "scale", "kind", "n_shared", "mean_a", "mean_b",
                "difference", "ci_low", "ci_high", "bootstrap_p", "reason", "test", "p_value", "p_adjusted",
                "significant"]  # fmt: skip
TOY_ITEMS = {f"t{i:02d}": ("low" if i < 8 else "high") for i in range(20)}


class FakeStore:
    """The read side of `Store` over in-memory runs (a toy benchmark needs no eval logs)."""

    def __init__(self, benchmark: str, n_runs: int = 3) -> None:
        rng = np.random.default_rng(1)
        judges = {
            "rubric": {"models": {"toy/judge": 20}, "prompts": {"toy/rubric@v1 sha256:" + "ab" * 32: 20}}
        }
        self._runs = [
            RunRow(k + 1, f"system {k}", benchmark, f"toy/m{k}", "toy-board", "toy board", "full", False,
                   f"2026-01-0{k + 1}T00:00:00+00:00", "2026-02-01T00:00:00+00:00", {"judges": judges})
            for k in range(n_runs)
        ]  # fmt: skip
        self._scores = {
            r.run_id: {
                "exact": {s: float(rng.uniform() < 0.3 + 0.3 * k) for s in TOY_ITEMS},
                "cost": {s: float(rng.uniform(0, 10)) for s in TOY_ITEMS},
                "grade": {s: float(rng.integers(0, 6)) for s in TOY_ITEMS},
            }
            for k, r in enumerate(self._runs)
        }

    def runs(self, board_key: str | None = None) -> list[RunRow]:
        return [r for r in self._runs if board_key in (None, r.board_key)]

    def items(self, run_id: int) -> dict[str, str]:
        return dict(TOY_ITEMS)

    def item_scores(self, run_id: int) -> dict[str, dict[str, float | None]]:
        return self._scores[run_id]  # type: ignore[return-value]

    def audits(self) -> dict[str, dict]:
        return {"judge": {"summary": {"alpha": 0.5}, "attached_at": "2026-02-01"}}


@pytest.fixture
def toy() -> Iterator[FakeStore]:
    register_benchmark(TOY)
    yield FakeStore("toybench")
    unregister_benchmark(TOY.task)


def test_board_columns_come_from_the_spec(toy: FakeStore) -> None:
    site = compute_all(toy, Settings(n_resamples=200))  # type: ignore[arg-type]
    [board] = site.boards
    assert [m.metric for m in board.metrics] == ["exact", "grade", "cost"]  # primary first, spec order
    exact, grade, cost = board.metrics
    assert (exact.label, exact.scale, exact.kind, exact.judge) == ("Exact %", 100, "binary", None)
    assert all(c.test and c.test.startswith("mcnemar") for c in exact.comparisons)
    assert grade.judge is not None and grade.judge.models == ("toy/judge",)
    assert grade.judge.audits == {"toy/judge": {"alpha": 0.5}}  # matched without the provider prefix
    assert not cost.primary and not cost.higher_is_better and cost.markings is None
    assert board.stratum_name == "level" and list(board.strata_sizes) == ["low", "high"]
    assert [s.stratum for s in exact.strata] == ["low", "high"]  # the spec's order, not alphabetical
    plain = site.to_dict()
    assert list(plain) == ["settings", "boards", "generated"]
    cost_json = plain["boards"][0]["metrics"][2]
    assert cost_json["markings"] == {} and "letters" not in cost_json["rows"]["1"]
    assert {"letters", "best"} <= set(plain["boards"][0]["metrics"][0]["rows"]["1"])
    page = render_html(site)
    assert "<title>KoBLEX / LEGIT / Toy leaderboard</title>" in page
    assert "Exact % ↑" in page and "by level" in page and "Cost &lt;s&gt;" in page
    assert "prompt toy/rubric@v1" in page and "α vs lawyers (toy/judge): 0.500" in page
    rows_csv = list(csv.DictReader(io.StringIO(render_csv(site))))
    assert {r["stratum"] for r in rows_csv} == {"all", "level=low", "level=high"}
    a, b = toy.runs()[:2]
    family = compare_runs(toy, [(a, b)], None, Settings(n_resamples=200))  # type: ignore[arg-type]
    assert [c.value.key for c in family.comparisons] == ["exact", "grade"]  # primary columns by default
    assert family.comparisons[0].test_label.startswith("McNemar")
    rows = family.to_dict()["comparisons"]
    assert list(rows[0]) == [*COMPARE_KEYS[:-2], "b01", "b10", *COMPARE_KEYS[-2:]]  # the CLI's contract
    assert list(rows[1]) == COMPARE_KEYS and rows[1]["test"].startswith("sign-flip")


def test_unknown_benchmark_is_an_error_naming_it() -> None:
    store = FakeStore("nobench")
    with pytest.raises(LookupError, match="nobench"):
        compute_board(store, "toy-board", Settings(n_resamples=50))  # type: ignore[arg-type]
    with pytest.raises(LookupError, match="nobench"):
        compare_runs(store, [(store.runs()[0], store.runs()[1])], None, Settings(n_resamples=50))  # type: ignore[arg-type]


def test_write_site_wants_the_model(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="Site"):
        write_site({"settings": {}, "boards": []}, tmp_path)  # type: ignore[arg-type]
    index = write_site(Site(settings=Settings(), boards=()), tmp_path)
    assert "No submissions yet." in index.read_text(encoding="utf-8")
