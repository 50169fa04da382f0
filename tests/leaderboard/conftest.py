"""Session fixtures: a board seeded with the ten released GPT-4o replays (`replay_logs`, tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def seeded_db(replay_logs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding the ten replays (submitted through the CLI). Tests must not write to it."""
    from koblex_tasks.cli.leaderboard import leaderboard_main

    db = tmp_path_factory.mktemp("seeded") / "board.sqlite"
    assert leaderboard_main(["submit", "--db", str(db), *map(str, replay_logs.values())]) == 0
    return db


@pytest.fixture(scope="session")
def seeded_site(seeded_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from koblex_tasks.cli.leaderboard import leaderboard_main

    out = tmp_path_factory.mktemp("site")
    assert leaderboard_main(["build", "--db", str(seeded_db), "--out", str(out), "--resamples", "2000"]) == 0
    return out
