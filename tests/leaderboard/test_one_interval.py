"""One bootstrap engine: a run's interval in its eval log equals its interval on the board (same scores,
resamples and seed), for a complete metric and for one with unscored items."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from koblex_tasks.leaderboard.board import Settings, compute_board
from koblex_tasks.leaderboard.store import Store
from koblex_tasks.leaderboard.submission import load_submission
from koblex_tasks.scorers.metrics import metric_values
from koblex_tasks.stats import DEFAULT_RESAMPLES, DEFAULT_SEED


def _log_interval(log_path: Path, key: str) -> tuple[float, float]:
    log = read_eval_log(str(log_path), header_only=True)
    assert log.results is not None
    [score] = [s for s in log.results.scores if s.name == key]
    values = metric_values(score)
    return values["bootstrap_ci_lower"], values["bootstrap_ci_upper"]


@pytest.mark.parametrize("stem,key", [("parser_gpt4o", "token_f1"), ("parser_gpt4o", "provision_f1")])
def test_log_interval_equals_board_interval(
    replay_logs: dict[str, Path], tmp_path: Path, stem: str, key: str
) -> None:
    log = replay_logs[stem]
    with Store(tmp_path / "lb.sqlite") as store:
        sub = load_submission(log)
        run_id = store.add(sub)
        board = compute_board(
            store, sub.board_key, Settings(n_resamples=DEFAULT_RESAMPLES, seed=DEFAULT_SEED)
        )
    [column] = [c for c in board.metrics if c.metric == key]
    row = column.rows[run_id]
    low, high = _log_interval(log, key)
    assert (row.low, row.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert row.low < row.mean < row.high


def test_unscored_items_are_left_out_alike(judged_log: str, tmp_path: Path) -> None:
    """The LF-Eval log of the tiny run: the log metric sees only scored samples; the board drops NaN items."""
    with Store(tmp_path / "lb.sqlite") as store:
        sub = load_submission(judged_log, allow_subset=True)
        run_id = store.add(sub)
        board = compute_board(
            store, sub.board_key, Settings(n_resamples=DEFAULT_RESAMPLES, seed=DEFAULT_SEED)
        )
    [column] = [c for c in board.metrics if c.metric == "lf_eval"]
    low, high = _log_interval(Path(judged_log), "lf_eval")
    assert (column.rows[run_id].low, column.rows[run_id].high) == (pytest.approx(low), pytest.approx(high))
