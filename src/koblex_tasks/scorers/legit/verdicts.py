"""Released judge verdicts in place of a judge: a row's labels for the rubric, and the stored-score check.

The solver `legit_verdicts` puts one row of a released evaluator file into the sample metadata
(`replayed_verdicts`, see `tasks/legit/verdicts.py`); the rubric scorer then reads the labels from it instead of
calling a judge. What a row can hold, and what becomes of it:

* an issue of the tree with JSON-boolean `contains_issue` and `correct_conclusion`: a verdict;
* an issue of the tree missing from the row (the official script skipped an issue whose judge reply did not
  parse): no verdict. Under our arithmetic the row is unscored (never rescaled) and counted as lacking issues;
  under `official_script` the issue is dropped and N shrinks, as the script did;
* a label that is not a JSON boolean: no verdict for that issue, with the reason (same outcome as missing);
* an issue id that is not in the tree: the row does not belong to this tree, so it is unscored under every rule.

Whatever rule the run uses, every row is also scored with the released scripts' arithmetic and compared with
its stored `score` (and per-issue `score`s): `stored_check` says which rules reproduce them bit for bit.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from koblex_tasks.scorers.legit.arithmetic import RULES, Verdict, label_record, rubric_score

_FLAGS = ("contains_issue", "correct_conclusion")


@dataclass
class ReplayedRow:
    """One released row read against the tree: labels in the row's order (missing tree issues last)."""

    labels: dict[str, Verdict | None] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)  # tree issues without a verdict in the row
    invalid: dict[str, str] = field(default_factory=dict)  # issue -> why its verdict is unusable
    extra: list[str] = field(default_factory=list)  # ids in the row that are not in the tree
    stored: dict[str, Any] = field(default_factory=dict)  # issue -> the per-issue score the file stores

    @property
    def problem(self) -> str | None:
        """Why the row cannot be scored under our arithmetic, or None."""
        parts = []
        if self.extra:
            parts.append(f"issue ids not in the tree {self.extra}")
        if self.missing:
            parts.append(f"no verdict for issues {self.missing} (the official judge reply did not parse)")
        if self.invalid:
            parts.append("unusable labels " + "; ".join(f"{k!r}: {v}" for k, v in self.invalid.items()))
        return ", ".join(parts) or None


def _verdict(record: Mapping[str, Any]) -> Verdict | str:
    bad = [f"{k}={record.get(k)!r}" for k in _FLAGS if not isinstance(record.get(k), bool)]
    if bad:
        return "not JSON booleans: " + ", ".join(bad)
    rationale = record.get("rationales")
    return Verdict(
        record["contains_issue"],
        record["correct_conclusion"],
        rationale if isinstance(rationale, str) else None,
    )


def read_row(issue_ids: Sequence[str], evaluation_result: Mapping[str, Mapping[str, Any]]) -> ReplayedRow:
    """The verdicts of one released row for the tree `issue_ids`."""
    tree = set(issue_ids)
    row = ReplayedRow()
    for issue_id, record in evaluation_result.items():
        if issue_id not in tree:
            row.extra.append(issue_id)
            continue
        verdict = _verdict(record)
        if isinstance(verdict, str):
            row.invalid[issue_id] = verdict
            row.labels[issue_id] = None
        else:
            row.labels[issue_id] = verdict
        row.stored[issue_id] = record.get("score")
    row.missing = [i for i in issue_ids if i not in row.labels]
    row.labels.update(dict.fromkeys(row.missing))
    return row


def stored_check(issue_ids: Sequence[str], row: ReplayedRow, stored_score: float) -> dict[str, Any]:
    """Does the released scripts' arithmetic reproduce the stored scores exactly, and under which rule?

    A rule reproduces a row when its total equals the stored `score` and every per-issue score equals the
    stored one (float equality: the script's own sums, in the file's order, give the same bits).
    """
    out: dict[str, Any] = {"stored_score": stored_score, "by_rule": {}}
    for rule in RULES:
        if row.extra:
            out["by_rule"][rule] = {"score": None, "reproduced": False, "issues_differing": []}
            continue
        result = rubric_score(issue_ids, row.labels, rule, official_script=True)
        differing = [
            i
            for i, stored in row.stored.items()
            if row.labels[i] is not None and result.issue_scores[i] != stored
        ]
        reproduced = result.scored and result.legit_score == stored_score and not differing
        out["by_rule"][rule] = {
            "score": result.legit_score,
            "reproduced": reproduced,
            "issues_differing": differing,
        }
    out["reproduced_by"] = [r for r in RULES if out["by_rule"][r]["reproduced"]]
    return out


def issue_metadata(row: ReplayedRow, issue_id: str, score: float | None) -> dict[str, Any]:
    """What the score metadata keeps of one replayed node (the same label keys as a live judgement)."""
    return {
        **label_record(row.labels.get(issue_id), score),
        "stored_score": row.stored.get(issue_id),
        "problem": row.invalid.get(issue_id)
        or ("no verdict in the released row" if issue_id in row.missing else None),
    }
