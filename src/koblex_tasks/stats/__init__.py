"""The one statistics engine: bootstrap intervals, paired tests, multiplicity, letter displays.

Used by the log metric (`scorers/metrics.py`), the leaderboard and the judge audit, so the same scores,
resamples and seed give the same interval everywhere.
"""

from koblex_tasks.stats.engine import *  # noqa: F403  (temporary: split by concern below)
from koblex_tasks.stats.engine import bootstrap_ci

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
DEFAULT_CONFIDENCE = 0.95


def mean_interval(
    values,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> tuple[float | None, float | None]:
    """Percentile-bootstrap interval of the mean of `values` (in item order; NaN items are left out)."""
    import numpy as np

    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return None, None
    ci = bootstrap_ci(x, n_resamples, confidence, seed).intervals[0]
    return ci.low, ci.high
