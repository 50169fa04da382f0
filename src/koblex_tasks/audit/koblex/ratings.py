"""LF-Eval audits: a judge's 0-100 KoBLEX scores (from an eval log) against human ratings of the same answers.

Human ratings come as a CSV with columns `sample_id,rating` (any numeric scale: correlations are scale-free).
Unscored samples of the log (Inspect's NaN sentinel) are left out and counted, never read as 0.
"""

import csv
import math
from pathlib import Path

from koblex_tasks.errors import DataError, csv_errors

LF_EVAL_SCORER = "lf_eval"


def load_ratings(path: str | Path) -> dict[str, float]:
    """`sample_id -> rating`; a missing column, a bad number or a repeated id is an error naming the line."""
    source = str(path)
    if not Path(path).is_file():
        raise DataError(source, None, "file not found")
    with Path(path).open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        with csv_errors(source, reader):
            missing = {"sample_id", "rating"} - set(reader.fieldnames or [])
            if missing:
                raise DataError(source, 1, f"missing column(s) {sorted(missing)}")
            ratings: dict[str, float] = {}
            for line, row in enumerate(reader, start=2):
                sample_id = (row["sample_id"] or "").strip()
                try:
                    value = float(row["rating"])
                except (TypeError, ValueError):
                    raise DataError(source, line, f"rating {row['rating']!r} is not a number") from None
                if not sample_id or not math.isfinite(value):
                    raise DataError(source, line, "empty sample_id or non-finite rating")
                if sample_id in ratings:
                    raise DataError(source, line, f"sample {sample_id!r} rated twice")
                ratings[sample_id] = value
    return ratings


def lf_eval_scores(log_path: str | Path) -> tuple[dict[str, float], int]:
    """The judge's LF-Eval score per sample of a KoBLEX log, and how many samples were unscored."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(log_path))
    scores: dict[str, float] = {}
    unscored = 0
    for sample in log.samples or []:
        score = (sample.scores or {}).get(LF_EVAL_SCORER)
        if score is None:
            continue
        value = score.value.get("lf_eval") if isinstance(score.value, dict) else score.value
        if not isinstance(value, int | float) or math.isnan(value):
            unscored += 1
            continue
        key = str(sample.id) if sample.epoch == 1 else f"{sample.id}#{sample.epoch}"
        scores[key] = float(value)
    if not scores and not unscored:
        raise DataError(str(log_path), None, f"the log has no '{LF_EVAL_SCORER}' scores")
    return scores, unscored
