"""Logs written before the layout change (koblex-tasks 0.1.0: registry-prefixed metric names such as
`koblex_tasks/scored_mean`) are still read by the leaderboard: it reads per-sample scores, never the metrics,
and re-derives them with today's scorers (the deterministic ones need nothing a 0.1.0 log lacks; a judge
column of such a log would be refused: it holds no judge record).

The fixture is a run of that release on this repository's own two-question toy data (tests/conftest.py),
made with `one_time_retrieval(k=2)` and a scripted model.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai.log import read_eval_log

from koblex_tasks.leaderboard.store import Store
from koblex_tasks.leaderboard.submission import load_submission

OLD_LOG = Path(__file__).parent / "fixtures" / "koblex-0.1.0-tiny.eval"


def test_a_log_of_the_previous_release_is_accepted(tmp_path: Path) -> None:
    header = read_eval_log(str(OLD_LOG), header_only=True)
    assert header.results is not None
    assert "koblex_tasks/scored_mean" in header.results.scores[0].metrics  # the old naming
    sub = load_submission(OLD_LOG)
    assert sub.benchmark == "koblex" and sub.provenance["task_version"] == "1.0.0"
    assert set(sub.provenance["verification"]) == {"provision_match", "token_f1"}
    assert all(
        v.startswith("re-derived from the log (2 scores") for v in sub.provenance["verification"].values()
    )
    values = {(sid, key): v for sid, _, key, v in sub.scores}
    assert values[("q1", "provision_f1")] is not None and values[("q1", "token_f1")] is not None
    assert header.eval.metadata["retrieval"]["corpus"]  # it names a local file...
    # ...but recorded no corpus fingerprint (0.1.0 did not): its corpus is unknown, whatever file it names
    assert sub.corpus_status == "unknown" and "unknown corpus" in sub.board_label
    with Store(tmp_path / "lb.sqlite") as store:
        assert store.add(sub) == 1
