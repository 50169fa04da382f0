"""The leaderboard's retrieval funnel (issue 33): one SVG funnel per run built at build time, the funnel columns
in every export, "—" (never 0) for a run of a task version without the funnel; and each LF-Eval judge variant
(`judge_context` / `judge_reference`) its own column."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from koblex_tasks.leaderboard.board import Settings, compute_all, compute_board
from koblex_tasks.leaderboard.plot import ABSENT, funnels
from koblex_tasks.leaderboard.site import render_csv, render_html, render_markdown, write_site
from tests.leaderboard.fakes import FakeStore

KEY = "koblex | lang=ko | dataset=" + "cd" * 32 + " | corpus=full | official scoring=True"
ITEMS = {f"q{i:02d}": str(1 + i % 3) for i in range(12)}
SETTINGS = Settings(n_resamples=200)
FUNNEL = {
    "gold_recall_bm25": 0.9,
    "gold_recall_rerank": 0.6,
    "gold_recall_selected": 0.3,
    "guess_overlap": 0.45,
}
JUDGES = {
    "lf_eval": {"models": {"openai/gpt-4o": 12}, "prompts": {"koblex/lf_eval@v2.en sha256:" + "ab" * 32: 12}}
}


def scores(f1: float, funnel: bool, lf: float | None = None) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = {
        "provision_f1": dict.fromkeys(ITEMS, f1),
        "token_f1": dict.fromkeys(ITEMS, f1),
    }
    if funnel:
        out |= {k: dict.fromkeys(ITEMS, v) for k, v in FUNNEL.items()}
    if lf is not None:
        out["lf_eval"] = dict.fromkeys(ITEMS, lf)
    return out


def funnel_store() -> FakeStore:
    """A 1.2.0 ParSeR run with the funnel and a 1.1.0 run without it."""
    return FakeStore(
        "koblex",
        ITEMS,
        [scores(0.5, True), scores(0.4, False)],
        board_key=KEY,
        names=["new parser", "old parser"],
    )


def test_each_run_gets_a_funnel_and_a_run_without_one_shows_a_dash() -> None:
    board = compute_board(funnel_store(), KEY, SETTINGS)  # type: ignore[arg-type]
    assert board.funnel == ("gold_recall_bm25", "gold_recall_rerank", "gold_recall_selected")
    new, old = funnels(board)
    assert [b.label for b in new.bars] == [
        "Gold recall @k",
        "Gold recall @l",
        "Gold recall selected",
        "Guess overlap",
    ]
    assert [b.stage for b in new.bars] == [True, True, True, False]
    assert [b.value for b in new.bars] == ["90.0%", "60.0%", "30.0%", "45.0%"]
    widths = [b.width for b in new.bars[:3]]
    assert widths == sorted(widths, reverse=True)  # bars are proportional: 90 % > 60 % > 30 %
    left, right = new.plot_left, new.plot_right
    assert new.bars[0].width == pytest.approx(left + 0.9 * (right - left), abs=0.01)
    assert all(b.width is None and b.value == ABSENT for b in old.bars)
    assert "not computed by this run" in old.bars[0].text


def test_page_draws_the_funnel_as_svg_and_never_a_zero_for_an_old_run() -> None:
    page = render_html(compute_all(funnel_store(), SETTINGS))  # type: ignore[arg-type]
    figure = page[
        page.index('<figure class="funnel"') : page.index("</figure>", page.index('<figure class="funnel"'))
    ]
    svgs = re.findall(r'<svg class="fn" data-run="(\d+)".*?</svg>', figure, re.S)
    assert svgs == ["1", "2"]
    old = re.search(r'<svg class="fn" data-run="2".*?</svg>', figure, re.S).group(0)  # type: ignore[union-attr]
    assert old.count(ABSENT) == 4 and "fn-bar" not in old and "0.0%" not in old
    new = re.search(r'<svg class="fn" data-run="1".*?</svg>', figure, re.S).group(0)  # type: ignore[union-attr]
    assert new.count('class="fn-bar"') == 4 and "90.0%" in new
    assert "<script" not in figure


def test_no_funnel_figure_when_no_run_has_the_funnel() -> None:
    store = FakeStore("koblex", ITEMS, [scores(0.5, False), scores(0.4, False)], board_key=KEY)
    site = compute_all(store, SETTINGS)  # type: ignore[arg-type]
    assert site.boards[0].funnel == ()
    assert 'class="funnel"' not in render_html(site)
    assert "Retrieval funnel" not in render_markdown(site)


def test_exports_carry_the_funnel_columns(tmp_path: Path) -> None:
    site = compute_all(funnel_store(), SETTINGS)  # type: ignore[arg-type]
    write_site(site, tmp_path)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "leaderboard.csv").read_text(encoding="utf-8"))))
    cells = {(r["name"], r["metric"]): r["mean"] for r in rows if r["stratum"] == "all"}
    for key, value in FUNNEL.items():
        assert float(cells["new parser", key]) == pytest.approx(value)
        assert cells["old parser", key] == ""  # not 0
    board = json.loads((tmp_path / "leaderboard.json").read_text(encoding="utf-8"))["boards"][0]
    assert board["funnel"] == ["gold_recall_bm25", "gold_recall_rerank", "gold_recall_selected"]
    recall = next(m for m in board["metrics"] if m["metric"] == "gold_recall_bm25")
    assert recall["rows"]["2"]["mean"] is None and recall["rows"]["2"]["reason"] == "not computed by this run"
    md = (tmp_path / "leaderboard.md").read_text(encoding="utf-8")
    funnel_rows = md[md.index("Retrieval funnel") :].splitlines()
    old = next(line for line in funnel_rows if line.startswith("| old parser"))
    assert old.count(ABSENT) == 4 and "0.00" not in old
    assert next(line for line in funnel_rows if line.startswith("| new parser")).startswith(
        "| new parser | 90.00 ["
    )
    assert render_csv(site) == (tmp_path / "leaderboard.csv").read_text(encoding="utf-8")


def test_each_judge_variant_is_its_own_column() -> None:
    """Same judge, same prompt, different judge input: never ranked, starred or lettered together."""
    provenances = [
        {"judges": JUDGES, "task_args": {}},  # the paper's: gold context, reference shown
        {"judges": JUDGES, "task_args": {"judge_context": "none"}},
        {"judges": JUDGES, "task_args": {"judge_context": "retrieved", "judge_reference": False}},
        {
            "judges": JUDGES,
            "task_args": {"judge_context": "gold", "judge_reference": True},
        },  # paper's, said aloud
    ]
    tables = [scores(0.5, True, lf) for lf in (80.0, 60.0, 70.0, 50.0)]
    store = FakeStore("koblex", ITEMS, tables, board_key=KEY, provenances=provenances)
    board = compute_board(store, KEY, SETTINGS)  # type: ignore[arg-type]
    lf = [m for m in board.metrics if m.metric.startswith("lf_eval")]
    assert len(lf) == 3
    graded = {m.label: sorted(rid for rid, r in m.rows.items() if r.mean is not None) for m in lf}
    paper = next(label for label in graded if "judge_context" not in label)
    assert graded[paper] == [1, 4]
    none = next(label for label in graded if "judge_context=none" in label)
    assert graded[none] == [2]
    retrieved = next(label for label in graded if "judge_context=retrieved" in label)
    assert "judge_reference=False" in retrieved and graded[retrieved] == [3]
    assert next(m for m in lf if m.label == none).rows[1].reason == "graded by another judge"
