"""`koblex grid koblex --table N`: the paper's other tables as rows, bad input refused, a mock Table 3 run
reported with each row paired against full ParSeR."""

from pathlib import Path

import pytest

from tests.grid.conftest import koblex_cli

ROWS = {
    "3": [
        "ParSeR (full)",
        "w/o selection",
        "w/o reranking",
        "w/o reranking and selection",
        "w/o parametric provisions",
    ],
    "4": ["ParSeR, sparse (BM25)", "ParSeR, dense (BGE-M3)", "ParSeR, hybrid (RRF)"],
    "5": ["ParSeR, k=50", "ParSeR, k=100", "ParSeR, k=200", "ParSeR, k=300"],
    "6": ["ParSeR, l=1", "ParSeR, l=5", "ParSeR, l=10", "ParSeR, l=20"],
}


@pytest.mark.parametrize("table", list(ROWS))
def test_dry_run_lists_the_tables_rows(table: str) -> None:
    run = koblex_cli("grid", "koblex", "--table", table, "--model", "koblexmock/demo", "--dry-run")
    assert run.code == 0, run.err
    lines = [line for line in run.out.splitlines() if line.startswith("koblexmock/demo · ")]
    assert [line.split(" · ", 1)[1].split(":", 1)[0] for line in lines] == ROWS[table]


def test_table_rows_pass_their_switches() -> None:
    run = koblex_cli("grid", "koblex", "--table", "3", "--model", "koblexmock/demo", "--dry-run")
    assert "w/o reranking and selection: koblex_tasks/parser(rerank=False, select=False)" in run.out
    run = koblex_cli("grid", "koblex", "--table", "4", "--model", "koblexmock/demo", "--dry-run")
    assert "ParSeR, dense (BGE-M3): koblex_tasks/parser() -T retrieval='dense'" in run.out
    run = koblex_cli(
        "grid", "koblex", "--table", "3", "--methods", "equal_budget", "--model", "koblexmock/demo", "--dry-run"
    )  # fmt: skip
    assert "parser(queries='question', equal_budget=True)" in run.out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--table", "7"], "has no table '7'"),
        (["--table", "2x"], "has no table '2x'"),
        (["--methods", "parser", "-S", "parser.k=0"], "k must be positive"),
        (["--methods", "parser", "-S", "parser.l=0"], "l must be positive"),
        (["--methods", "sp_or", "-S", "sp_or.select=false"], "unexpected keyword argument 'select'"),
        (["--methods", "parser", "-S", "parser.equal_budget=true"], "needs queries"),
    ],
)
def test_bad_input_is_one_line_before_any_run(argv: list[str], message: str, tmp_path: Path) -> None:
    run = koblex_cli("grid", "koblex", "--model", "koblexmock/demo", "--log-dir", str(tmp_path), *argv)
    assert run.code == 2
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], run.err
    assert not list(tmp_path.glob("*.eval"))


def test_a_mock_table_3_is_reported_against_full_parser(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    run = koblex_cli(
        "grid", "koblex", "--table", "3", "--model", "koblexmock/demo", "-T", f"data={tiny_questions}",
        "-T", f"corpus={tiny_corpus}", "-T", "reranker=none", "--log-dir", str(tmp_path / "logs"),
        "--display", "none", "--resamples", "200", "--no-released",
    )  # fmt: skip
    assert run.code == 0, run.err[-2000:]
    md = (tmp_path / "logs" / "grid-koblex.md").read_text(encoding="utf-8")
    assert "each row beside ParSeR (full)" in md and "vs ParSeR (full) (Holm)" in md
    assert "not public" in md
    for row in ROWS["3"][1:]:
        assert f"| koblexmock/demo | {row} | Provision F1 |" in md, md  # paired with full ParSeR
