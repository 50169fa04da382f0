"""Bridge from a LEGIT eval log to issue-level judge labels for the agreement audit.

`load_judge_labels_from_log(path)` yields `{generator, doc_id, issue_id, contains_issue, correct_conclusion,
score}` mappings, one per judged issue node, ready for
`koblex_tasks.audit.labels.labeller_from_records(name, records)`. Issues whose judge reply stayed unparsable
(no labels) are skipped; an issue whose score could not be determined (official rule, unlabelled descendant)
is skipped too, since the audit requires a finite score.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, read_eval_log

from koblex_tasks.errors import DataError

SCORER_NAME = "legit_rubric"


def generator_name(log: EvalLog, sample_metadata: dict[str, Any] | None = None) -> str:
    """The model whose answers were graded: the replayed generator, else the evaluated model's name."""
    replay = (sample_metadata or {}).get("replay") or {}
    if isinstance(replay, dict) and replay.get("generator"):
        return str(replay["generator"])
    model = log.eval.model
    return model.split("/", 1)[1] if model.startswith("replay/") else model


def find_score(scores: dict[str, Any], where: str, name: str = SCORER_NAME) -> Any:
    """A sample's score by scorer name (also `pkg/name`, or `name1` when Inspect de-duplicated it)."""
    if name in scores:
        return scores[name]
    candidates = [k for k in scores if k.rsplit("/", 1)[-1].startswith(name)]
    if len(candidates) == 1:
        return scores[candidates[0]]
    raise DataError(where, None, f"no '{name}' score (scorers: {sorted(scores)})")


def load_judge_labels_from_log(
    path: str | Path | EvalLog, generator: str | None = None
) -> Iterator[dict[str, Any]]:
    """Yield one label record per judged issue of every sample of a LEGIT eval log.

    Args:
        path: an `.eval`/`.json` log of `koblex_tasks/legit` (or an already loaded EvalLog).
        generator: override the generator name (default: the replayed generator or the evaluated model).
    """
    log = path if isinstance(path, EvalLog) else read_eval_log(str(path))
    where = str(log.location or path)
    if log.samples is None:
        raise DataError(where, None, "the log has no samples (header-only read?)")
    for sample in log.samples:
        if not sample.scores:
            continue
        score = find_score(sample.scores, where)
        meta = score.metadata or {}
        issues = meta.get("issues")
        if not isinstance(issues, dict):
            raise DataError(where, None, f"sample {sample.id!r}: score metadata has no per-issue labels")
        doc_id = str(meta.get("doc_id") or (sample.metadata or {}).get("doc_id") or sample.id)
        name = generator or generator_name(log, sample.metadata)
        for issue_id, labels in issues.items():
            if labels.get("contains_issue") is None or labels.get("correct_conclusion") is None:
                continue
            if labels.get("score") is None:
                continue
            yield {
                "generator": name,
                "doc_id": doc_id,
                "issue_id": issue_id,
                "contains_issue": bool(labels["contains_issue"]),
                "correct_conclusion": bool(labels["correct_conclusion"]),
                "score": float(labels["score"]),
            }
