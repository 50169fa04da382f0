"""The metrics every scorer of both benchmarks reports, built from the benchmark spec.

Per value key: Inspect's `mean()` over scored samples (Inspect leaves unscored samples, its NaN sentinel, out
and counts them in `scored_samples` / `unscored_samples`), our `bootstrap_ci` (the leaderboard's engine: the
same scores, resamples and seed give the same interval in the log and on the board) and Inspect's
`grouped(mean(), <stratum>)` per stratum, plus the mean of the stratum means where the paper reports it.
"""

from collections.abc import Sequence

from inspect_ai.log import EvalMetric, EvalScore
from inspect_ai.scorer import Metric, SampleScore, grouped, mean, metric

from koblex_tasks.spec import ScorerSpec, StratumSpec
from koblex_tasks.stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, mean_interval


def in_item_order(scores: Sequence[SampleScore]) -> list[SampleScore]:
    """Scores sorted by sample id, the item order the leaderboard resamples in."""
    return sorted(scores, key=lambda s: str(s.sample_id))


@metric
def bootstrap_ci(
    resamples: int = DEFAULT_RESAMPLES, confidence: float = DEFAULT_CONFIDENCE, seed: int = DEFAULT_SEED
) -> Metric:
    """Percentile-bootstrap interval of the mean (`lower`, `upper`), seeded, items in sample-id order."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        values = [s.score.as_float() for s in in_item_order(scores)]
        low, high = mean_interval(values, resamples, confidence, seed)
        nan = float("nan")  # no scored sample: an undefined interval (the log holds floats only)
        return {"lower": nan if low is None else low, "upper": nan if high is None else high}

    return compute


def stratum_metric(stratum: StratumSpec) -> Metric:
    """Mean per stratum (`grouped_<name>`), plus the mean of the stratum means when the spec asks for it."""
    if stratum.strata_mean_label:
        return grouped(
            mean(),
            stratum.key,
            all="groups",
            all_label=stratum.strata_mean_label,
            name_template=stratum.name_template,
        )
    return grouped(mean(), stratum.key, all=False, name_template=stratum.name_template)


def value_metrics(
    scorer: ScorerSpec, stratum: StratumSpec, extra: dict[str, list[Metric]] | None = None
) -> dict[str, list[Metric]]:
    """`Score.value` key -> its metrics: mean, bootstrap interval and per-stratum means (or `extra`'s list)."""
    extra = extra or {}
    return {key: extra.get(key) or [mean(), bootstrap_ci(), stratum_metric(stratum)] for key in scorer.keys}


def plain_name(metric: EvalMetric) -> str:
    """A metric's name without the registry prefix its dict key may carry: `mean`, `bootstrap_ci_lower`,
    `grouped_hop1`. Built from the metric's own name and group, not by editing the key."""
    return f"{metric.group}_{metric.name}" if metric.group and metric.group != metric.name else metric.name


def metric_values(score: EvalScore) -> dict[str, float]:
    """All metrics of an `EvalScore` by plain name (see `plain_name`)."""
    return {plain_name(m): m.value for m in score.metrics.values()}


def metric_value(score: EvalScore, name: str) -> float | None:
    """One metric of an `EvalScore` by plain name, None when the score has no such metric."""
    return metric_values(score).get(name)
