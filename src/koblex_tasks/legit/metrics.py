"""LEGIT metrics: means and CIs per component, per-difficulty means, the paper's mean of difficulty means.

All of them skip Inspect's NaN "unscored" sentinel (a sample whose judge reply stayed unparsable) instead of
averaging it as zero; `scored_count` says how many samples each mean rests on.
"""

from collections.abc import Sequence

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, metric

from koblex_tasks.legit.data import DIFFICULTIES
from koblex_tasks.scorers.metrics import ci_lower, ci_upper, group_means, scored_count, scored_mean


def difficulty_means(scores: Sequence[SampleScore]) -> dict[str, float]:
    """Mean per difficulty present in `scores` (NaN for a difficulty whose samples are all unscored)."""
    means = group_means(scores, "difficulty")
    order = [d for d in DIFFICULTIES if d in means] + sorted(set(means) - set(DIFFICULTIES))
    return {d: means[d] for d in order}


@metric
def by_difficulty() -> Metric:
    """Mean per difficulty: keys `easy`, `medium`, `hard` (only those present)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return difficulty_means(scores)

    return compute


@metric
def difficulty_mean() -> Metric:
    """The paper's headline: the unweighted mean of the per-difficulty means.

    Over the difficulties present (the paper's script would count a difficulty with no samples as 0 and
    still divide by 3); NaN if a present difficulty has no scored sample.
    """

    def compute(scores: list[SampleScore]) -> float:
        means = list(difficulty_means(scores).values())
        if not means or any(np.isnan(m) for m in means):
            return float("nan")
        return float(np.mean(means))

    return compute


@metric
def pooled_failure_rate() -> Metric:
    """Unparsable judge replies over all judged issues (pooled, not a mean of per-sample rates)."""

    def compute(scores: list[SampleScore]) -> float:
        failures = total = 0
        for s in scores:
            meta = s.score.metadata or {}
            failures += int(meta.get("n_unparsable", 0))
            total += int(meta.get("n_issues", 0))
        return failures / total if total else float("nan")

    return compute


def component_metrics() -> list[Metric]:
    return [scored_mean(), ci_lower(), ci_upper(), scored_count(), by_difficulty(), difficulty_mean()]


def legit_metrics() -> dict[str, list[Metric]]:
    return {
        "legit_score": component_metrics(),
        "final_order": component_metrics(),
        "coverage": component_metrics(),
        "correctness": component_metrics(),
        "judge_failure_rate": [scored_mean(), pooled_failure_rate()],
    }
