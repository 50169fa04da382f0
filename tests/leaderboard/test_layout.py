"""The page at phone (390 px) and desktop (1400 px) width in headless Chromium: layout facts measured in the
DOM by `measure.js` (injected into a copy of the page), ranking in the browser, and the two screenshots.

The site holds the ten replayed GPT-4o KoBLEX runs and a synthetic LEGIT board (judge-graded columns, no
retrieval corpus), so both benchmarks' boards are measured.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from koblex_tasks.leaderboard.board import Board, Settings, Site, compute_all
from koblex_tasks.leaderboard.plot import TOP
from koblex_tasks.leaderboard.site import rank_rule, write_site
from koblex_tasks.leaderboard.store import Store
from tests.leaderboard.browser import measure, png_size, screenshot
from tests.leaderboard.fakes import legit_store

MEASURE_JS = Path(__file__).with_name("measure.js")
PHONE, DESKTOP = (390, 844), (1400, 1000)


@pytest.fixture(scope="module")
def two_boards(seeded_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Site, Path]:
    settings = Settings(n_resamples=1000)
    with Store(seeded_db) as store:
        koblex = compute_all(store, settings)
    legit = compute_all(legit_store(), settings)  # type: ignore[arg-type]
    site = Site(settings=settings, boards=(*koblex.boards, *legit.boards))
    out = tmp_path_factory.mktemp("layout")
    return site, write_site(site, out)


@pytest.fixture(scope="module")
def phone(two_boards: tuple[Site, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return measure(two_boards[1], MEASURE_JS, tmp_path_factory.mktemp("phone"), *PHONE)


@pytest.fixture(scope="module")
def desktop(two_boards: tuple[Site, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return measure(two_boards[1], MEASURE_JS, tmp_path_factory.mktemp("desktop"), *DESKTOP)


def boards(site: Site, measured: dict[str, Any]) -> list[tuple[Board, dict[str, Any]]]:
    assert len(measured["boards"]) == len(site.boards) == 2
    return list(zip(site.boards, measured["boards"], strict=True))


def check_plots(board: Board, m: dict[str, Any], max_width: float) -> None:
    """One overall panel per ranked column, each with one mark per scored system and "n/a" for the rest."""
    overall = [p for p in m["plots"] if p["kind"] == "all"]
    assert [p["metric"] for p in overall] == [c.metric for c in board.rank_chain()]
    for p in overall:
        column = board.column(p["metric"])
        scored = sum(r.mean is not None for r in column.rows.values())
        assert p["marks"] == scored and p["marks"] + p["na"] == p["rows"] == len(board.runs)
        assert 250 <= p["width"] <= max_width and 100 < p["height"] < 1000, p
        assert p["ticks"] >= 3
    strata = [p for p in m["plots"] if p["kind"] == "stratum"]
    assert len(strata) == len(overall) * len(board.strata_sizes)  # one small multiple per stratum


def test_phone_width_layout(two_boards: tuple[Site, Path], phone: dict[str, Any]) -> None:
    site, _ = two_boards
    assert phone["innerWidth"] == PHONE[0]
    assert phone["scrollWidth"] <= phone["innerWidth"] and phone["scrollWidth"] <= phone["clientWidth"]
    for board, m in boards(site, phone):
        assert m["title"] == board.title and m["tooltip"] == f"board key: {board.key}"
        frame = m["frame"]
        assert frame["scrollWidth"] > frame["clientWidth"] and frame["scrolled"] > 0, (
            frame
        )  # the table scrolls
        assert frame["right"] <= phone["clientWidth"]
        rank, name, first, last = zip(m["before"], m["after"], strict=True)
        for before, after in (rank, name, first):  # sticky: rank, system and the first metric stay put
            assert after["left"] == pytest.approx(before["left"], abs=0.5)
        assert last[1]["left"] < last[0]["left"] - 50  # while the rest of the row scrolled under them
        for cells in (m["before"], m["after"]):  # and they do not overlap each other
            assert cells[1]["left"] == pytest.approx(cells[0]["right"], abs=1)
            assert cells[2]["left"] == pytest.approx(cells[1]["right"], abs=1)
            assert cells[2]["right"] < phone["clientWidth"] - 40  # room left to see scrolled columns
        check_plots(board, m, phone["clientWidth"])
        row = [p for p in m["plots"] if p["metric"] == board.rank_by[0]]
        assert all(b["top"] >= a["top"] + a["height"] - 1 for a, b in itertools.pairwise(row))  # stacked


def test_desktop_width_layout(two_boards: tuple[Site, Path], desktop: dict[str, Any]) -> None:
    site, _ = two_boards
    assert desktop["innerWidth"] == DESKTOP[0] and desktop["scrollWidth"] <= desktop["innerWidth"]
    for board, m in boards(site, desktop):
        assert m["title"] == board.title
        assert m["frame"]["scrollWidth"] <= m["frame"]["clientWidth"]  # the whole table fits
        check_plots(board, m, 500)
        row = [p for p in m["plots"] if p["metric"] == board.rank_by[0]]
        assert len({round(p["top"]) for p in row}) == 1  # a column's panels side by side
        assert all(b["left"] > a["right"] for a, b in itertools.pairwise(row))


def test_titles_and_corpus_wording(two_boards: tuple[Site, Path], phone: dict[str, Any]) -> None:
    site, _ = two_boards
    (_, km), (_, lm) = boards(site, phone)
    assert km["title"] == "KoBLEX — Korean, 226 items, full corpus, official scoring"
    assert lm["title"] == "LEGIT — Korean, 30 items, paper rule"
    assert "corpus" in km["text"]
    assert "corpus" not in lm["text"].lower()  # no corpus wording on a board without a retrieval corpus


def test_ranking_in_the_browser(two_boards: tuple[Site, Path], phone: dict[str, Any]) -> None:
    """The page's own order is the default rule; the select re-ranks exactly as `Board.ranked_runs`."""
    site, _ = two_boards
    for board, m in boards(site, phone):
        assert m["order"] == [r.name for r in board.ranked_runs()]
        re = m["reranked"]
        metric = board.rank_chain()[-1].metric
        assert re["metric"] == metric and re["ranked"] == metric and not re["controlHidden"]
        assert re["order"] == [r.name for r in board.ranked_runs(metric)]
        assert re["rule"] == rank_rule(board, metric)
        assert re["topTransform"] == f"translate(0,{TOP:g})"  # the plot's rows moved with the table


def test_rank_query_parameter(two_boards: tuple[Site, Path], tmp_path: Path) -> None:
    site, index = two_boards
    koblex = site.boards[0]
    m = measure(index, MEASURE_JS, tmp_path, *DESKTOP, query="?rank=token_f1")
    assert m["boards"][0]["order"] == [r.name for r in koblex.ranked_runs("token_f1")]
    assert m["boards"][0]["order"][1].endswith("standard_prompting")  # second on token F1
    assert m["boards"][1]["order"] == [r.name for r in site.boards[1].ranked_runs()]  # no such column: kept


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1400px", "390px"])
def test_screenshots(two_boards: tuple[Site, Path], tmp_path: Path, size: tuple[int, int]) -> None:
    shot = screenshot(two_boards[1], tmp_path, tmp_path / f"leaderboard-{size[0]}.png", *size)
    assert png_size(shot) == size and shot.stat().st_size > 10_000
