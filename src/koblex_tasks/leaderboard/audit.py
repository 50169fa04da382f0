"""Judge audits on the leaderboard: read `koblex judge-audit ... --json` output, summarise alpha per judge.

The audit JSON holds one report per labeller pair; a judge labeller is named ``judge <model> (<log>)``, the
lawyers ``group <g>``. For each judge the summary keeps Krippendorff's alpha (pooled binary labels, the
headline; plus issue-score alpha) against every lawyer group and their mean.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

JUDGE_NAME = re.compile(r"^judge (?P<model>.+?)(?: \((?P<log>[^()]*)\))?$")


class AuditError(ValueError):
    pass


def _alpha(entries: list[dict[str, Any]], label: str) -> float | None:
    """The report's alpha for `label`; one outside [-1, 1] (or not a number) is no Krippendorff's alpha."""
    for entry in entries or []:
        if entry.get("label") == label:
            value = (entry.get("alpha") or {}).get("value")
            if value is None:
                return None
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not -1.0 <= float(value) <= 1.0
            ):
                raise AuditError(f"{label} alpha {value!r} is not an agreement coefficient in [-1, 1]")
            return float(value)
    return None


def summarise_audit(report: dict[str, Any], judge_model: str | None = None) -> dict[str, dict[str, Any]]:
    """judge model -> {"alpha", "issue_score_alpha", "vs": [...]} from a judge-audit JSON object."""
    comparisons = report.get("comparisons")
    if not isinstance(comparisons, list):
        raise AuditError("not a `koblex judge-audit --json` report: no 'comparisons' list")
    out: dict[str, dict[str, Any]] = {}
    for comp in comparisons:
        names = [str(comp.get("labeller_a", "")), str(comp.get("labeller_b", ""))]
        judges = [JUDGE_NAME.match(n) for n in names]
        if sum(j is not None for j in judges) != 1:
            continue  # lawyer vs lawyer, or judge vs judge
        k = 0 if judges[0] else 1
        model = judge_model or judges[k].group("model")  # type: ignore[union-attr]
        entry = out.setdefault(model, {"vs": []})
        entry["vs"].append(
            {
                "against": names[1 - k],
                "alpha": _alpha(comp.get("binary"), "pooled"),
                "issue_score_alpha": _alpha(comp.get("scores"), "issue score"),
                "shared_units": comp.get("shared"),
            }
        )
    if not out:
        raise AuditError("the report compares no judge with lawyers (labeller names 'judge <model> (...)')")
    for entry in out.values():
        for field in ("alpha", "issue_score_alpha"):
            values = [v[field] for v in entry["vs"] if v[field] is not None]
            entry[field] = sum(values) / len(values) if values else None
    return out


def load_audit(path: str | Path, judge_model: str | None = None) -> tuple[dict[str, Any], dict[str, dict]]:
    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise AuditError(f"{path}: cannot read the audit JSON: {exc}") from None
    if not isinstance(report, dict):
        raise AuditError(f"{path}: expected a JSON object")
    return report, summarise_audit(report, judge_model)
