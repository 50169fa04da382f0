"""One Inspect eval log as a leaderboard submission: read, validated against its benchmark's spec, extracted.

Everything the leaderboard needs later (per-sample scores, strata, provenance, the board it belongs to) is
extracted here, so statistics and the site never read the log again. Validation collects every problem it
finds and raises :class:`SubmissionRejected` with all of them; nothing is stored for a rejected log. The steps
live in their own modules: `reading` (the file), `identity` (task, version, scorers), `coverage` (samples,
epochs, subsets), `scores` (values checked against the spec's ranges), `placement` (the board), `provenance`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from koblex_tasks.leaderboard.coverage import check_coverage
from koblex_tasks.leaderboard.identity import identify
from koblex_tasks.leaderboard.placement import place
from koblex_tasks.leaderboard.provenance import default_name, provenance
from koblex_tasks.leaderboard.reading import read_log
from koblex_tasks.leaderboard.rejection import Problems, SubmissionRejected
from koblex_tasks.leaderboard.scores import ScoreRow, extract_scores

__all__ = ["Submission", "SubmissionRejected", "load_submission"]


@dataclass
class Submission:
    """One validated run: identity, board, per-item scores and provenance."""

    log_path: str
    eval_id: str
    content_hash: str
    task: str
    benchmark: str
    model: str
    name: str
    board_key: str
    board_label: str
    dataset_fingerprint: str
    corpus_status: str  # "full" | "partial" | "unknown"
    subset: bool
    created: str
    epochs: int
    # (sample_id, epoch, metric, value or None for unscored)
    scores: list[ScoreRow] = field(default_factory=list)
    strata: dict[str, str] = field(default_factory=dict)  # sample_id -> stratum label
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def sample_ids(self) -> list[str]:
        return sorted(self.strata)


def _content_hash(task: str, samples: list[Any], rows: list[ScoreRow]) -> str:
    """Identical outputs and scores give the same hash: a resubmitted (renamed) copy is a duplicate."""
    content = sorted(
        (
            str(s.id),
            int(s.epoch),
            s.output.completion if s.output else "",
            s.metadata.get("replay") is not None,
        )
        for s in samples
    )
    blob = json.dumps([task, content, sorted(rows)], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def load_submission(path: str | Path, name: str | None = None, allow_subset: bool = False) -> Submission:
    """Validate ``path`` and extract a :class:`Submission`; raises :class:`SubmissionRejected`."""
    path = Path(path)
    log, samples = read_log(path)
    problems = Problems(path)
    run = identify(log, problems)
    coverage = check_coverage(log, samples, run, problems, allow_subset)
    table = extract_scores(samples, run, problems)
    problems.check()

    ev = log.eval
    replay = ev.solver in run.spec.replay_solvers or str(ev.model).startswith("replay/")
    placement = place(run, coverage, ev.task_args or {}, replay)
    return Submission(
        log_path=str(path.resolve()),
        eval_id=ev.eval_id,
        content_hash=_content_hash(run.spec.task, samples, table.rows),
        task=run.spec.task,
        benchmark=run.spec.name,
        model=str(ev.model),
        name=name or default_name(log, run),
        board_key=placement.board_key,
        board_label=placement.board_label,
        dataset_fingerprint=str(run.fingerprint),
        corpus_status=placement.corpus_status,
        subset=coverage.subset,
        created=str(ev.created),
        epochs=coverage.epochs,
        scores=table.rows,
        strata=table.strata,
        provenance=provenance(log, run, coverage, placement, table, replay),
    )
