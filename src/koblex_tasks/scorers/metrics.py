"""Metrics that respect "unscored": Inspect's NaN sentinel is left out (and counted), never averaged as zero.

Confidence intervals are 95% percentile bootstraps over samples, seeded so a log is reproducible.
"""

from collections.abc import Sequence

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, metric

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0


def finite_values(scores: Sequence[SampleScore]) -> np.ndarray:
    """Numeric score values with Inspect's NaN unscored sentinel removed."""
    vals = np.array(
        [float(s.score.value) for s in scores if isinstance(s.score.value, int | float)], dtype=float
    )
    return vals[~np.isnan(vals)]


def bootstrap_interval(
    values: np.ndarray,
    confidence: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean; a single value (or none) gives a degenerate interval."""
    if len(values) == 0:
        return float("nan"), float("nan")
    if len(values) == 1:
        return float(values[0]), float(values[0])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(values), size=(resamples, len(values)))
    means = values[idx].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)


@metric
def scored_mean() -> Metric:
    """Mean over scored samples (unscored ones are excluded, see `scored_count`)."""

    def compute(scores: list[SampleScore]) -> float:
        values = finite_values(scores)
        return float(values.mean()) if len(values) else float("nan")

    return compute


@metric
def ci_lower() -> Metric:
    """Lower end of the 95% bootstrap interval of the mean."""

    def compute(scores: list[SampleScore]) -> float:
        return bootstrap_interval(finite_values(scores))[0]

    return compute


@metric
def ci_upper() -> Metric:
    """Upper end of the 95% bootstrap interval of the mean."""

    def compute(scores: list[SampleScore]) -> float:
        return bootstrap_interval(finite_values(scores))[1]

    return compute


@metric
def scored_count() -> Metric:
    """How many samples were scored (the rest were explicitly unscored)."""

    def compute(scores: list[SampleScore]) -> int:
        return len(finite_values(scores))

    return compute


def group_means(scores: Sequence[SampleScore], key: str) -> dict[str, float]:
    """Mean of scored values per value of sample metadata `key` (NaN for a group with nothing scored)."""
    groups: dict[str, list[SampleScore]] = {}
    for s in scores:
        value = (s.sample_metadata or {}).get(key)
        if value is not None:
            groups.setdefault(str(value), []).append(s)
    means = {}
    for name, members in groups.items():
        values = finite_values(members)
        means[name] = float(values.mean()) if len(values) else float("nan")
    return means


@metric
def by_hops() -> Metric:
    """Mean per hop count (number of gold provisions), keys `hop1`, `hop2`, `hop3`."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        means = group_means(scores, "hop_count")
        return {f"hop{hops}": means[hops] for hops in sorted(means, key=int)}

    return compute


def standard_metrics() -> list[Metric]:
    return [scored_mean(), ci_lower(), ci_upper(), scored_count(), by_hops()]


def metric_values(eval_score) -> dict[str, float]:
    """An EvalScore's metrics by plain name (`scored_mean`), without the registry prefix."""
    return {name.rsplit("/", 1)[-1]: m.value for name, m in eval_score.metrics.items()}
