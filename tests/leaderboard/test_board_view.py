"""How a board reads: readable titles, the ranking rule, the forest plot's geometry, "n/a" for untested pairs,
and no corpus wording on a board whose benchmark has no retrieval corpus."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from koblex_tasks import spec as sp
from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.benchmarks.legit.spec import LEGIT
from koblex_tasks.leaderboard.board import Settings, compute_all
from koblex_tasks.leaderboard.plot import axis, common_prefix, forest, short_label
from koblex_tasks.leaderboard.site import render_html, render_markdown
from koblex_tasks.leaderboard.titles import board_title, distinct_titles
from koblex_tasks.tasks import Benchmark, register_benchmark, unregister_benchmark
from tests.leaderboard.fakes import LEGIT_KEY, FakeStore, legit_store

KOBLEX_KEY = "koblex | lang=ko | dataset=a2557f4675c72a1af5cdea69245bb35af680c1637858d9c0fd5bf102b62abdff | corpus=partial | official scoring=True"


def section_text(page: str, k: int) -> str:
    """The text of board `k`'s section with every tag (and so every attribute) removed."""
    start = page.index(f'<section class="board" id="board-{k}">')
    return re.sub(r"<[^>]+>", " ", page[start : page.index("</section>", start)])


# ------------------------------------------------------------------------------------- titles


def test_titles_read_like_the_facts() -> None:
    partial = board_title(KOBLEX, KOBLEX_KEY, "partial", 226, False, [{"corpus": {"size": 5423}}])
    assert (
        partial
        == "KoBLEX — Korean, 226 items, partial corpus (5,423 of 233,544 paragraphs), official scoring"
    )
    two = [{"corpus": {"size": 5423}}, {"corpus": {"size": 4000}}]
    assert "partial corpus (4,000–5,423 of 233,544 paragraphs)" in board_title(
        KOBLEX, KOBLEX_KEY, "partial", 226, False, two
    )
    fixed = KOBLEX_KEY.replace("corpus=partial", "corpus=full").replace("=True", "=False") + " | subset=ab12"
    runs = [{"task_args": {"hops": 1}, "dataset": {"size": 226}}]
    assert board_title(KOBLEX, fixed, "full", 55, True, runs) == (
        "KoBLEX — Korean, 55 of 226 items (subset: hops=1), full corpus, official scoring off"
    )
    english = KOBLEX_KEY.replace("lang=ko", "lang=en")
    assert board_title(KOBLEX, english, "unknown", 226, False, []).startswith(
        "KoBLEX — English, 226 items, corpus completeness unknown"
    )
    assert board_title(LEGIT, LEGIT_KEY, "full", 300, False, []) == "LEGIT — Korean, 300 items, paper rule"
    assert board_title(LEGIT, "bench", "full", 12, False, []) == "LEGIT — 12 items"  # a key of another shape


def test_titles_that_read_alike_are_told_apart() -> None:
    keys = [LEGIT_KEY, LEGIT_KEY.replace("c0ffee", "beef00"), LEGIT_KEY + " | subset=ab", "other"]
    titles = distinct_titles(["LEGIT — paper rule"] * 3 + ["Toy"], keys)
    assert titles[1] == "LEGIT — paper rule, dataset beef00beef00" and titles[3] == "Toy"
    # the same dataset twice: the key's own hash tells them apart
    assert all(t.startswith("LEGIT — paper rule, dataset c0ffeec0ffee, board ") for t in titles[::2][:2])
    assert len(set(titles)) == 4


# ------------------------------------------------------------------------------------- ranking

RANKED = sp.BenchmarkSpec(
    name="rankbench",
    title="Rank",
    task="tests/rankbench",
    version="1",
    scorers=(
        sp.ScorerSpec(
            "s",
            (
                sp.ValueSpec("errors", "Errors", 0.0, 10.0, higher_is_better=False),
                sp.ValueSpec("first", "First", 0.0, 1.0),
                sp.ValueSpec("quality", "Quality", 0.0, 1.0),
            ),
        ),
    ),
    stratum=sp.StratumSpec("level", "level"),
    headline=("errors", "quality"),
    ranking="errors",
)
ITEMS = {f"i{k}": "a" for k in range(6)}


def flat(value: float | None) -> dict[str, float | None]:
    return dict.fromkeys(ITEMS, value)


@pytest.fixture
def ranked() -> Iterator[FakeStore]:
    """Five runs: three with errors (lower is better), two without; "first" is undefined for the best one."""
    register_benchmark(Benchmark(spec=RANKED))
    tables = [
        {"errors": flat(3.0), "first": flat(0.9), "quality": flat(0.2)},
        {"errors": flat(1.0), "quality": flat(0.1)},  # the best on errors; no "first" column at all
        {"errors": flat(3.0), "first": flat(0.1), "quality": flat(0.9)},  # ties run 1: quality decides
        {"first": flat(0.5), "quality": flat(0.3)},  # closed book: no errors
        {"first": flat(0.8), "quality": flat(0.6)},
    ]
    yield FakeStore("rankbench", ITEMS, tables, names=["A", "B", "C", "D", "E"])
    unregister_benchmark(RANKED.task)


def test_default_rank_is_the_ranking_column_then_the_headline(ranked: FakeStore) -> None:
    [board] = compute_all(ranked, Settings(n_resamples=50)).boards  # type: ignore[arg-type]
    assert [m.metric for m in board.metrics] == ["errors", "first", "quality"]  # spec order: "first" is first
    assert board.rank_by == ("errors", "quality", "first")
    # B (fewest errors) is first although its first column is undefined; C beats A on quality at equal
    # errors; D and E (no errors) follow, by quality
    assert [r.name for r in board.ranked_runs()] == ["B", "C", "A", "E", "D"]
    assert [r.name for r in board.ranked_runs("first")] == ["A", "E", "D", "C", "B"]
    page = render_html(compute_all(ranked, Settings(n_resamples=50)))  # type: ignore[arg-type]
    assert 'data-rank-by="errors quality first"' in page and 'data-lower-better="errors"' in page
    assert "Ranked by Errors (lower is better); runs with no Errors value follow" in page
    assert re.findall(r'<td class="name"><a [^>]*>(\w)</a>', page) == ["B", "C", "A", "E", "D"]


def test_seeded_ranking_and_untested_pairs(seeded_site: Path) -> None:
    data = json.loads((seeded_site / "leaderboard.json").read_text(encoding="utf-8"))
    [board] = data["boards"]
    assert board["rank_by"] == ["provision_f1", "provision_em", "token_f1"]
    assert board["title"] == "KoBLEX — Korean, 226 items, full corpus, official scoring"
    assert board["label"] == "koblex · ko · full corpus · official scoring=True"  # stored label, unchanged
    f1 = next(m for m in board["metrics"] if m["metric"] == "provision_f1")
    untested = [c for c in f1["comparisons"] if c["p_adjusted"] is None]
    assert untested and all(c["significant"] is False and c["reason"] == "no shared items" for c in untested)
    page = (seeded_site / "index.html").read_text(encoding="utf-8")
    n_untested = sum(
        c["p_adjusted"] is None for m in board["metrics"] for c in m["comparisons"]
    )  # every primary column's family
    assert page.count('<td class="na" title="not tested: no shared items">n/a</td>') == n_untested
    assert f'<h2 class="board-title" title="board key: {board["key"]}">{board["title"]}</h2>' in page
    md = (seeded_site / "leaderboard.md").read_text(encoding="utf-8")
    assert f"## {board['title']}" in md and "Board key: koblex | lang=ko | dataset=" in md
    assert md.index("standard_prompting") < md.index("chain_of_thought")  # by token F1 among closed-book


# ------------------------------------------------------------------------------------- forest plot


def test_axis_ticks_are_round_numbers() -> None:
    assert axis(5.46, 63.79) == (0.0, 80.0, [0.0, 20.0, 40.0, 60.0, 80.0])
    assert axis(0.44, 32.74) == (0.0, 40.0, [0.0, 10.0, 20.0, 30.0, 40.0])
    lo, hi, ticks = axis(2.1, 2.9)
    assert lo <= 2.1 and hi >= 2.9 and 3 <= len(ticks) <= 6
    assert axis(1.0, 1.0)[2] == [0.5, 0.75, 1.0, 1.25, 1.5]  # a single value still gets an axis


def test_labels_drop_the_shared_prefix() -> None:
    names = ["replay/gpt-4o · parser", "replay/gpt-4o · self_ask"]
    assert common_prefix(names) == "replay/gpt-4o · "
    assert common_prefix(["gpt · ", "gpt · x"]) == ""  # one name would be left empty
    assert common_prefix(["only one"]) == ""
    assert short_label("m · cot_one_time_retrieval_with_extras", "m · ") == "cot_one_ti…with_extras"  # 22


def test_forest_has_a_mark_per_scored_system(seeded_site: Path, seeded_db: Path) -> None:
    from koblex_tasks.leaderboard.store import Store

    with Store(seeded_db) as store:
        [board] = compute_all(store, Settings(n_resamples=200)).boards
    fp = forest(board)
    assert [r.metric for r in fp.rows] == ["provision_f1", "provision_em", "token_f1"]
    f1 = fp.rows[0]
    assert [p.kind for p in f1.panels] == ["all", "stratum", "stratum", "stratum"]
    overall = f1.panels[0]
    assert [m.name for m in overall.marks] == [r.name for r in board.ranked_runs()]
    assert sum(m.xs is not None for m in overall.marks) == 8  # two closed-book methods: n/a
    parser, closed_book = overall.marks[0], overall.marks[-1]
    assert parser.best and parser.text.startswith("59.41 [") and parser.xs is not None
    assert overall.plot_left <= parser.xs[0] <= parser.xs[1] <= parser.xs[2] <= overall.plot_right
    assert closed_book.xs is None and closed_book.text == "no scored items" and not closed_book.best
    assert [t.label for t in overall.ticks] == ["0", "25", "50", "75", "100"]
    assert {p.ticks for p in f1.panels} == {overall.ticks}  # small multiples share the column's axis


# ------------------------------------------------------------------------------------- no corpus


def test_legit_board_has_no_corpus_wording() -> None:
    site = compute_all(legit_store(), Settings(n_resamples=200))  # type: ignore[arg-type]
    [board] = site.boards
    assert board.title == "LEGIT — Korean, 30 items, paper rule" and not board.corpus_applies
    assert board.to_dict()["corpus_status"] == "full"  # the export keeps its fields
    page = render_html(site)
    assert "corpus" not in section_text(page, 0).lower()
    assert (
        "Judge-graded (LEGIT score, Final order, Coverage, Correctness, Judge failures %): judge openai/gpt-4.1"
        in page
    )
    assert "corpus" not in render_markdown(site).split("## ", 1)[1].split("Board key")[0].lower()


def test_board_without_ranked_columns_renders(ranked: FakeStore) -> None:
    """Runs that computed only an unranked column: submission order, said so, no crash."""
    store = FakeStore("rankbench", ITEMS, [{"other": flat(1.0)}, {"other": flat(2.0)}])
    assert compute_all(store, Settings(n_resamples=50)).boards[0].metrics == ()  # type: ignore[arg-type]
    one = {"first": flat(0.5)}
    [board] = compute_all(FakeStore("rankbench", ITEMS, [one, one]), Settings(n_resamples=50)).boards  # type: ignore[arg-type]
    assert board.rank_by == ("first",)
    page = render_html(compute_all(store, Settings(n_resamples=50)))  # type: ignore[arg-type]
    assert "No ranked column: runs in submission order." in page
