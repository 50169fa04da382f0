"""The static site and exports; rendering, sorting and escaping checked in headless Chromium when present."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import markupsafe
import numpy as np
import pytest
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log

from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.leaderboard.board import Settings, Site, compare_runs, compute_all, compute_board
from koblex_tasks.leaderboard.site import render_csv, render_html, script_json, write_site
from koblex_tasks.leaderboard.store import Store
from koblex_tasks.spec import (
    BenchmarkSpec,
    ScorerSpec,
    StratumSpec,
    ValueSpec,
)
from koblex_tasks.tasks import Benchmark, register_benchmark, unregister_benchmark
from tests.leaderboard.browser import chromium
from tests.leaderboard.fakes import FakeStore

EVIL_MODEL = "replay/<script>document.title='pwned'</script>"
EVIL_METHOD = "<img src=x onerror=\"document.title='img'\">--></script><!--"
TITLE = "KoBLEX / LEGIT leaderboard"


def row_names(dom: str, table: int = 0) -> list[str]:
    """System names in row order (the browser adds <tbody> to nested tables, so match the rows themselves)."""
    start = dom.find(f'id="lb-{table}"')
    assert start >= 0, "leaderboard table not rendered"
    end = dom.find(f'id="lb-{table + 1}"')
    rows = re.findall(
        r'<tr data-run="[^"]*"[^>]*>\s*<td class="rank">\d+</td>\s*<td class="name"><a [^>]*>(.*?)</a>',
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
    assert '<svg class="ci"' in page and "by hops" in page and '<details class="runs">' in page
    assert page.count('<svg class="fp fp-all"') == 3  # a forest panel per ranked column


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
    figure = page[page.index('<figure class="forest"') : page.index("</figure>")]
    assert str(markupsafe.escape(EVIL_MODEL)) in figure and "<img" not in figure  # plot tooltips, escaped
    md = (evil_site / "leaderboard.md").read_text(encoding="utf-8")
    assert "<script>" not in md and "<img" not in md


# ------------------------------------------------------------------------------------- headless Chromium


def test_page_renders_in_chromium(seeded_site: Path, tmp_path: Path) -> None:
    dom = chromium((seeded_site / "index.html").as_uri(), tmp_path, "--dump-dom")
    assert 'data-ready="1"' in dom, "the page's script did not run"
    names = row_names(dom)
    assert len(names) == 10 and names[0].endswith("parser")
    # closed-book methods (no provision F1) follow the others, ordered by token F1: standard prompting first
    assert [n.rsplit(" ", 1)[-1] for n in names[-2:]] == ["standard_prompting", "chain_of_thought"]
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


def toy_store(benchmark: str, n_runs: int = 3) -> FakeStore:
    """Three toy runs of increasing exact-match rate, with a judge-graded rubric column."""
    rng = np.random.default_rng(1)
    judges = {"rubric": {"models": {"toy/judge": 20}, "prompts": {"toy/rubric@v1 sha256:" + "ab" * 32: 20}}}
    tables = [
        {
            "exact": {s: float(rng.uniform() < 0.3 + 0.3 * k) for s in TOY_ITEMS},
            "cost": {s: float(rng.uniform(0, 10)) for s in TOY_ITEMS},
            "grade": {s: float(rng.integers(0, 6)) for s in TOY_ITEMS},
        }
        for k in range(n_runs)
    ]
    audits = {"judge": {"summary": {"alpha": 0.5}, "attached_at": "2026-02-01"}}
    return FakeStore(benchmark, TOY_ITEMS, tables, provenance={"judges": judges}, audits=audits)


@pytest.fixture
def toy() -> Iterator[FakeStore]:
    register_benchmark(Benchmark(spec=TOY))
    yield toy_store("toybench")
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
    store = toy_store("nobench")
    with pytest.raises(LookupError, match="nobench"):
        compute_board(store, "toy-board", Settings(n_resamples=50))  # type: ignore[arg-type]
    with pytest.raises(LookupError, match="nobench"):
        compare_runs(store, [(store.runs()[0], store.runs()[1])], None, Settings(n_resamples=50))  # type: ignore[arg-type]


def test_write_site_wants_the_model(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="Site"):
        write_site({"settings": {}, "boards": []}, tmp_path)  # type: ignore[arg-type]
    index = write_site(Site(settings=Settings(), boards=()), tmp_path)
    assert "No submissions yet." in index.read_text(encoding="utf-8")
