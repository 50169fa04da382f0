"""Agreement statistics between two raters: Krippendorff's alpha with a bootstrap CI, Cohen's kappa, correlations.

Why these statistics: LEGIT's paper validates its LLM judge by Krippendorff's alpha against lawyers, so
alpha is the headline figure; Cohen's kappa and raw agreement are reported beside it because readers know
them, and Pearson/Spearman on scores show whether a judge *ranks* answers like a lawyer even when it is
calibrated differently. Every figure comes with the number of units it rests on, and an undefined figure
is ``None`` with a reason (never NaN), so reports stay valid JSON. Nothing here knows about LEGIT: the
comparison of issue labellers built on these is :mod:`koblex_tasks.audit.legit.agreement`.

All comparisons use two coders and only the units both rated, so Krippendorff's alpha has the closed form
``1 - D_o / D_e`` with no missing data. Point estimates call ``krippendorff.alpha``; the bootstrap evaluates
the same closed form on the statistics engine's item-count matrices (a resample's counts are its cluster
weights), which is vectorised (2000 resamples in milliseconds) and uses the same draws as every other
bootstrap of the project.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import krippendorff
import numpy as np
import scipy.stats

from koblex_tasks import stats
from koblex_tasks.stats.resampling import count_chunks, percentile_bounds

__all__ = [
    "CI_LEVEL",
    "DEFAULT_N_BOOT",
    "DEFAULT_SEED",
    "AlphaClusters",
    "BinaryAgreement",
    "BootstrapCI",
    "Correlation",
    "Estimate",
    "RatingCorrelation",
    "ScoreAgreement",
    "alpha_bootstrap_ci",
    "alpha_from_weights",
    "binary_agreement",
    "cohen_kappa",
    "correlation",
    "interval_clusters",
    "krippendorff_alpha",
    "nominal_clusters",
    "rating_correlation",
    "score_agreement",
    "unit_clusters",
]

Level = Literal["nominal", "interval"]
CI_LEVEL = stats.DEFAULT_CONFIDENCE
DEFAULT_N_BOOT = 2000
DEFAULT_SEED = stats.DEFAULT_SEED


@dataclass(frozen=True, slots=True)
class Estimate:
    """A statistic that may be undefined: then ``value`` is None and ``reason`` says why."""

    value: float | None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class BootstrapCI:
    """Percentile bootstrap interval; ``n_valid`` resamples had a defined statistic (the rest are dropped)."""

    low: float | None
    high: float | None
    level: float
    n_boot: int
    n_valid: int
    resampled: str
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Correlation:
    """Pearson or Spearman correlation with its two-sided p-value, or None with a reason."""

    value: float | None
    p_value: float | None
    n: int
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class BinaryAgreement:
    """Agreement of two raters on a 0/1 label (or on several labels pooled)."""

    label: str
    units: int
    agreements: int
    raw_agreement: float | None
    kappa: Estimate
    alpha: Estimate
    alpha_ci: BootstrapCI


@dataclass(frozen=True, slots=True)
class ScoreAgreement:
    """Agreement of two raters on a numeric score: interval alpha plus correlations."""

    label: str
    units: int
    alpha: Estimate
    alpha_ci: BootstrapCI
    pearson: Correlation
    spearman: Correlation


@dataclass(frozen=True, slots=True)
class RatingCorrelation:
    """LF-Eval style audit: correlation of two raters' numeric ratings on the items both rated."""

    items_a: int
    items_b: int
    shared: int
    only_a_count: int
    only_b_count: int
    pearson: Correlation
    spearman: Correlation

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------- statistics


def _as_pair(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"expected two 1-D sequences of equal length, got shapes {x.shape} and {y.shape}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("values must be finite (missing units must be dropped before comparing)")
    return x, y


def krippendorff_alpha(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, level: Level
) -> Estimate:
    """Krippendorff's alpha for two coders over the same units (no missing values)."""
    x, y = _as_pair(a, b)
    if x.size == 0:
        return Estimate(None, "no shared units")
    if np.unique(np.concatenate([x, y])).size < 2:
        return Estimate(None, "all values identical: expected disagreement is 0, so alpha is undefined")
    value = float(krippendorff.alpha(reliability_data=np.vstack([x, y]), level_of_measurement=level))
    if not math.isfinite(value):  # pragma: no cover - guarded above; kept so NaN can never reach JSON
        return Estimate(None, "alpha is not finite")
    return Estimate(value)


def cohen_kappa(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> Estimate:
    """Cohen's kappa for two raters: (p_o - p_e) / (1 - p_e) with each rater's own marginals."""
    x, y = _as_pair(a, b)
    if x.size == 0:
        return Estimate(None, "no shared units")
    categories, codes = np.unique(np.concatenate([x, y]), return_inverse=True)
    k, n = categories.size, x.size
    table = np.zeros((k, k))
    np.add.at(table, (codes[:n], codes[n:]), 1.0)
    table /= n
    p_o = float(np.trace(table))
    p_e = float(table.sum(axis=1) @ table.sum(axis=0))
    if 1.0 - p_e <= 1e-12:
        return Estimate(
            None, "both raters used a single identical category: chance agreement is 1, kappa undefined"
        )
    return Estimate((p_o - p_e) / (1.0 - p_e))


def correlation(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, method: Literal["pearson", "spearman"]
) -> Correlation:
    """Pearson or Spearman via scipy; constant input or fewer than 2 items gives None with a reason."""
    x, y = _as_pair(a, b)
    n = int(x.size)
    if n < 2:
        return Correlation(None, None, n, f"needs at least 2 items, got {n}")
    constant = [name for name, v in (("first", x), ("second", y)) if np.all(v == v[0])]
    if constant:
        return Correlation(None, None, n, f"{' and '.join(constant)} rater's values are constant: undefined")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = scipy.stats.pearsonr(x, y) if method == "pearson" else scipy.stats.spearmanr(x, y)
    near_constant = False
    for w in caught:  # scipy's near-constant warning becomes the reason; anything else is passed on
        if issubclass(w.category, scipy.stats.NearConstantInputWarning):
            near_constant = True
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    value, p_value = float(result.statistic), float(result.pvalue)
    if not math.isfinite(value):
        return Correlation(None, None, n, f"{method} correlation is not finite")
    reason = (
        "a rater's values are nearly constant: the correlation may be inaccurate" if near_constant else None
    )
    return Correlation(value, p_value if math.isfinite(p_value) else None, n, reason)


# ----------------------------------------------------------------------------------------------- bootstrap


@dataclass(frozen=True, slots=True)
class AlphaClusters:
    """Per resampling cluster sufficient statistics of two-coder alpha (a cluster holds >= 1 unit).

    The bootstrap resamples clusters, not units, so units that belong together (a node's two labels)
    stay together; alpha of a resample is then a function of weighted sums of these statistics.
    """

    units: np.ndarray  # (C,) number of units in the cluster
    delta: np.ndarray  # (C,) sum over its units of delta(a, b): disagreement (nominal) or (a - b)^2
    counts: np.ndarray | None = (
        None  # nominal: (C, K) how often each category occurs among its 2*units values
    )
    s1: np.ndarray | None = None  # interval: (C,) sum of (centred) values
    s2: np.ndarray | None = None  # interval: (C,) sum of squared (centred) values


def nominal_clusters(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> AlphaClusters:
    """Clusters for nominal alpha; ``pairs[i]`` = (coder-a values, coder-b values) of cluster i's units."""
    cats = np.unique(np.concatenate([np.concatenate(p) for p in pairs])) if pairs else np.zeros(0)
    counts = np.zeros((len(pairs), cats.size))
    for i, (a, b) in enumerate(pairs):
        counts[i] = np.bincount(np.searchsorted(cats, np.concatenate([a, b])), minlength=cats.size)
    units = np.array([len(a) for a, _ in pairs], dtype=float)
    delta = np.array([float(np.sum(a != b)) for a, b in pairs])
    return AlphaClusters(units=units, delta=delta, counts=counts)


def unit_clusters(a: np.ndarray, b: np.ndarray) -> AlphaClusters:
    """Nominal clusters of one unit each (the usual bootstrap over units)."""
    return nominal_clusters([(a[i : i + 1], b[i : i + 1]) for i in range(a.size)])


def interval_clusters(a: np.ndarray, b: np.ndarray) -> AlphaClusters:
    """One unit per cluster; values are centred first (alpha is shift-invariant) for numerical stability."""
    centre = float(np.mean(np.concatenate([a, b]))) if a.size else 0.0
    ac, bc = a - centre, b - centre
    return AlphaClusters(units=np.ones(a.size), delta=(a - b) ** 2, s1=ac + bc, s2=ac**2 + bc**2)


def alpha_from_weights(cl: AlphaClusters, weights: np.ndarray) -> np.ndarray:
    """Alpha for each row of cluster weights (B, C); NaN where undefined. Two coders, no missing data:
    D_o = mean delta over units, D_e = mean delta over all pairs of the 2N pooled values."""
    n_units = weights @ cl.units
    n = 2.0 * n_units
    d_o = (weights @ cl.delta) / n_units
    if cl.counts is not None:
        nc = weights @ cl.counts
        d_e = (n**2 - np.sum(nc**2, axis=1)) / (n * (n - 1.0))
        defined = d_e > 0.5 / (n * (n - 1.0))  # counts are integers: d_e is 0 or >= 2 / (n(n-1))
    else:
        assert cl.s1 is not None and cl.s2 is not None
        s1, s2 = weights @ cl.s1, weights @ cl.s2
        ss = s2 - s1**2 / n
        d_e = 2.0 * ss / (n - 1.0)
        defined = ss > 1e-12 * np.maximum(s2, 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(defined, 1.0 - d_o / np.where(defined, d_e, 1.0), np.nan)


def alpha_bootstrap_ci(
    cl: AlphaClusters, point: Estimate, n_boot: int, seed: int, resampled: str
) -> BootstrapCI:
    """Percentile CI of alpha over ``n_boot`` cluster resamples drawn by the statistics engine.

    The engine's item-count matrix of a resample of the C clusters is exactly its cluster-weight matrix,
    so the audit draws what every other bootstrap of the project draws for the same size and seed.
    Resamples where alpha is undefined (no expected disagreement) are dropped and counted.
    """

    def empty(reason: str) -> BootstrapCI:
        return BootstrapCI(None, None, CI_LEVEL, n_boot, 0, resampled, reason)

    if point.value is None:
        return empty(f"no interval: {point.reason}")
    if n_boot == 0:
        return empty("bootstrap disabled (n_boot=0)")
    chunks = count_chunks(cl.units.size, n_boot, seed)
    alphas = np.concatenate([alpha_from_weights(cl, weights) for weights in chunks])
    alphas = alphas[np.isfinite(alphas)]
    if alphas.size == 0:
        return empty("alpha was undefined in every resample")
    low, high = percentile_bounds(alphas[None, :], CI_LEVEL)
    dropped = n_boot - alphas.size
    note = f"{dropped} of {n_boot} resamples had undefined alpha and were dropped" if dropped else None
    return BootstrapCI(float(low[0]), float(high[0]), CI_LEVEL, n_boot, int(alphas.size), resampled, note)


# ------------------------------------------------------------------------------------------- report rows


def binary_agreement(
    label: str, a: np.ndarray, b: np.ndarray, clusters: AlphaClusters, n_boot: int, seed: int, resampled: str
) -> BinaryAgreement:
    """Raw agreement, kappa and nominal alpha (bootstrapping ``clusters``) of two raters' 0/1 labels."""
    agreements = int(np.sum(a == b))
    alpha = krippendorff_alpha(a, b, "nominal")
    return BinaryAgreement(
        label=label,
        units=int(a.size),
        agreements=agreements,
        raw_agreement=agreements / a.size if a.size else None,
        kappa=cohen_kappa(a, b),
        alpha=alpha,
        alpha_ci=alpha_bootstrap_ci(clusters, alpha, n_boot, seed, resampled),
    )


def score_agreement(
    label: str, a: np.ndarray, b: np.ndarray, n_boot: int, seed: int, resampled: str
) -> ScoreAgreement:
    """Interval alpha (bootstrapping units) and Pearson/Spearman of two raters' numeric scores."""
    alpha = krippendorff_alpha(a, b, "interval")
    return ScoreAgreement(
        label=label,
        units=int(a.size),
        alpha=alpha,
        alpha_ci=alpha_bootstrap_ci(interval_clusters(a, b), alpha, n_boot, seed, resampled),
        pearson=correlation(a, b, "pearson"),
        spearman=correlation(a, b, "spearman"),
    )


def rating_correlation(a: Mapping[Hashable, float], b: Mapping[Hashable, float]) -> RatingCorrelation:
    """Pearson/Spearman between two raters' numeric ratings (e.g. LF-Eval judge vs human), on shared ids."""
    shared = [k for k in a if k in b]
    x = np.array([a[k] for k in shared], dtype=float)
    y = np.array([b[k] for k in shared], dtype=float)
    return RatingCorrelation(
        items_a=len(a),
        items_b=len(b),
        shared=len(shared),
        only_a_count=len(a) - len(shared),
        only_b_count=len(b) - len(shared),
        pearson=correlation(x, y, "pearson"),
        spearman=correlation(x, y, "spearman"),
    )
