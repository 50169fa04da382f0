"""`koblex leaderboard build` re-validates every stored score (type and range) and names the run it refuses."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from koblex_tasks.cli.leaderboard import leaderboard_main
from tests.leaderboard.test_folding import _run


@pytest.mark.parametrize(
    "value, why",
    [
        (42, "is outside [0.0, 1.0]"),
        ("abc", "is not a finite number"),
        (-0.5, "is outside"),
    ],
)
def test_an_edited_score_stops_the_build(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path, capsys, value, why: str
) -> None:
    db = tmp_path / "board.sqlite"
    log = _run(tiny_questions, tiny_corpus, tmp_path / "logs", k=2)
    assert leaderboard_main(["submit", "--db", str(db), "--allow-subset", "--name", "genuine", str(log)]) == 0
    assert (
        leaderboard_main(["build", "--db", str(db), "--out", str(tmp_path / "ok"), "--resamples", "100"]) == 0
    )
    capsys.readouterr()
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE scores SET value = ? WHERE metric = 'provision_f1' AND sample_id = 'q1'", (value,)
        )
    assert leaderboard_main(["build", "--db", str(db), "--out", str(tmp_path / "site")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "run #1 'genuine': stored score provision_f1=" in line and why in line
    assert not (tmp_path / "site" / "index.html").exists()
