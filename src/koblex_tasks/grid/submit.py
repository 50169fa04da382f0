"""The grid's logs into a leaderboard store, as `koblex leaderboard submit` would store them one by one.

Runs with `--limit` (or another subset) go on their own subset board; a log already stored (same eval id or
identical outputs and scores) is reported as such and is not a failure, so re-running a grid with `--submit`
is harmless.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from koblex_tasks.leaderboard.store import Store
from koblex_tasks.leaderboard.submission import SubmissionRejected, load_submission

DUPLICATE = "duplicate of stored run"


@dataclass
class Submitted:
    lines: list[str] = field(default_factory=list)
    rejected: int = 0


def submit_logs(db: str | Path, paths: Sequence[str]) -> Submitted:
    """Validate and store each log; rejections are counted (and printed), duplicates only reported."""
    out = Submitted()
    with Store(Path(db)) as store:
        for path in paths:
            try:
                sub = load_submission(path, allow_subset=True)
                run_id = store.add(sub)
            except SubmissionRejected as exc:
                if DUPLICATE in str(exc):
                    out.lines.append(f"already stored: {path}")
                    continue
                out.rejected += 1
                out.lines.append(f"rejected: {exc}")
                continue
            out.lines.append(f"stored run #{run_id} {sub.name!r} on board {sub.board_label!r}")
    return out
