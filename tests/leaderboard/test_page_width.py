"""The page for a reader: no sideways scroll at phone width whatever a title holds (a 300-character title with a
long unbreakable path, in headless Chromium at 390 px), every symbol explained, what each benchmark measures,
titles without local paths, and the same title and count in `list`, the page and the exports."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from koblex_tasks.leaderboard.board import Settings, Site, compute_all
from koblex_tasks.leaderboard.site import write_site
from koblex_tasks.leaderboard.titles import CLOSED_BOOK, board_title, corpus_phrase, store_titles
from koblex_tasks.tasks import spec_for_task
from tests.leaderboard.browser import measure
from tests.leaderboard.fakes import legit_store

MEASURE_JS = Path(__file__).with_name("measure.js")
PHONE = (390, 844)
LONG_PATH = "verdicts=../shared/data/legit/released_verdicts/" + "reasoning_tasks_" * 14 + ".jsonl"


def test_a_300_character_title_does_not_widen_the_page(tmp_path: Path) -> None:
    site = compute_all(legit_store(), Settings(n_resamples=200))  # type: ignore[arg-type]
    title = (f"LEGIT — {LONG_PATH} " + "x" * 300)[:300]
    assert len(title) == 300 and max(len(word) for word in title.split()) > 200
    board = dataclasses.replace(site.boards[0], title=title)
    index = write_site(Site(settings=site.settings, boards=(board,)), tmp_path / "site")
    page = measure(index, MEASURE_JS, tmp_path, *PHONE)
    assert page["innerWidth"] == PHONE[0]
    assert page["scrollWidth"] <= page["clientWidth"], page["scrollWidth"]


def test_the_page_says_what_each_benchmark_measures_and_what_its_symbols_mean(tmp_path: Path) -> None:
    site = compute_all(legit_store(), Settings(n_resamples=200))  # type: ignore[arg-type]
    text = write_site(site, tmp_path / "site").read_text(encoding="utf-8")
    assert '<p class="about"><b>KoBLEX</b>: 226 Korean legal scenario questions' in text
    assert '<p class="about"><b>LEGIT</b>: 300 Korean court cases' in text
    for symbol in ("↑ higher is better, ↓ lower is better", "★ = not significantly different", "letters: ",
                   "<sup>J</sup> = judge-graded"):  # fmt: skip
        assert symbol in text


def test_titles_never_show_a_local_path_or_a_corpus_a_closed_book_board_never_read() -> None:
    legit, koblex = spec_for_task("legit"), spec_for_task("koblex")
    assert legit is not None and koblex is not None
    runs = [{"task_args": {"verdicts": "../shared/data/legit/released_verdicts/reasoning_tasks_o3.jsonl"}}]
    title = board_title(legit, "legit | lang=ko | dataset=x", "full", 3, True, runs)
    assert (
        "verdicts=reasoning_tasks_o3.jsonl" in title and "../" not in title and "/" not in title.split("—")[1]
    )
    closed = [{"corpus": {"kind": "not applicable: no sample records retrieval or provisions (closed book)"}}]
    assert corpus_phrase(koblex, "full", [], closed) == CLOSED_BOOK
    assert (
        corpus_phrase(koblex, "full", [], [*closed, {"corpus": {"kind": "hub statute dataset"}}])
        == "full corpus"
    )


def test_list_says_what_the_page_and_the_exports_say(tmp_path: Path) -> None:
    """The same board title (wording and item count) in `koblex leaderboard list`, the page and the exports."""
    store = legit_store()
    site = compute_all(store, Settings(n_resamples=200))  # type: ignore[arg-type]
    listed = store_titles(store)
    index = write_site(site, tmp_path / "site")
    exported = json.loads((tmp_path / "site" / "leaderboard.json").read_text(encoding="utf-8"))["boards"]
    markdown = (tmp_path / "site" / "leaderboard.md").read_text(encoding="utf-8")
    for board, export in zip(site.boards, exported, strict=True):
        assert listed[board.key] == board.title == export["title"]
        assert f"{board.n_items} items" in board.title and f"## {board.title}" in markdown
        assert f">{board.title}</h2>" in index.read_text(encoding="utf-8")
