"""Logs written before the layout change (koblex-tasks 0.1.0: registry-prefixed metric names such as
`koblex_tasks/scored_mean`) are still read by the leaderboard: it reads per-sample scores, never the metrics,
and re-derives them with today's scorers (the deterministic ones need nothing a 0.1.0 log lacks; a judge
column of such a log would be refused: it holds no judge record). Since the event rules (task 1.3.0), a
non-released run that predicts provisions must show the retrievals that returned them: such old logs are
refused with the version to re-run with.

The fixture is a run of that release on this repository's own two-question toy data (tests/conftest.py),
made with `one_time_retrieval(k=2)` and a scripted model.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from koblex_tasks.leaderboard.submission import SubmissionRejected, load_submission

OLD_LOG = Path(__file__).parent / "fixtures" / "koblex-0.1.0-tiny.eval"


def test_a_log_of_the_previous_release_is_read_and_told_to_re_run() -> None:
    """Read, re-derived and placed as before; then refused by the event rules alone: a 0.1.0 (task 1.0.0)
    log recorded no retrievals, so its predicted provisions cannot be shown to come from one (issue 32)."""
    header = read_eval_log(str(OLD_LOG), header_only=True)
    assert header.results is not None
    assert "koblex_tasks/scored_mean" in header.results.scores[0].metrics  # the old naming
    with pytest.raises(SubmissionRejected) as refused:
        load_submission(OLD_LOG)
    [reason] = refused.value.reasons  # every earlier check passed: only the event rule is left
    assert "breaks the event rule provisions" in reason
    assert "task version 1.0.0 did not record retrievals: re-run with task version >= 1.3.0" in reason
