"""Agreement between two labellers of LEGIT issue trees (lawyer vs lawyer, judge vs lawyer).

Why these statistics: LEGIT's paper validates its LLM judge by Krippendorff's alpha against lawyers, so
alpha is the headline figure; Cohen's kappa and raw agreement are reported beside it because readers know
them, and Pearson/Spearman on scores show whether a judge *ranks* answers like a lawyer even when it is
calibrated differently. Every figure comes with the number of units it rests on, and an undefined figure
is ``None`` with a reason (never NaN), so reports stay valid JSON.

All comparisons use two coders and only the units both labelled, so Krippendorff's alpha has the closed
form ``1 - D_o / D_e`` with no missing data. Point estimates call ``krippendorff.alpha``; the bootstrap
uses the same closed form on resampling weights, which is vectorised (2000 resamples in milliseconds).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import krippendorff
import numpy as np
import scipy.stats

from koblex_tasks.audit.legit.labels import LabellerSet, UnitKey

__all__ = [
    "AgreementReport",
    "BinaryAgreement",
    "BootstrapCI",
    "Correlation",
    "Estimate",
    "RatingCorrelation",
    "ScoreAgreement",
    "cohen_kappa",
    "compare_labellers",
    "correlation",
    "krippendorff_alpha",
    "rating_correlation",
]

Level = Literal["nominal", "interval"]
CI_LEVEL = 0.95
DEFAULT_N_BOOT = 2000
DEFAULT_SEED = 0


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
    """Agreement on a 0/1 label (or on both labels pooled)."""

    label: str
    units: int
    agreements: int
    raw_agreement: float | None
    kappa: Estimate
    alpha: Estimate
    alpha_ci: BootstrapCI


@dataclass(frozen=True, slots=True)
class ScoreAgreement:
    """Agreement on a numeric score: interval alpha plus correlations."""

    label: str
    units: int
    alpha: Estimate
    alpha_ci: BootstrapCI
    pearson: Correlation
    spearman: Correlation


@dataclass(frozen=True, slots=True)
class AgreementReport:
    """Everything :func:`compare_labellers` found; ``to_dict`` is JSON-serialisable."""

    labeller_a: str
    labeller_b: str
    units_a: int
    units_b: int
    shared: int
    only_a_count: int
    only_b_count: int
    only_a: list[list[str]]
    only_b: list[list[str]]
    n_boot: int
    seed: int
    binary: list[BinaryAgreement] = field(default_factory=list)
    scores: list[ScoreAgreement] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    result = scipy.stats.pearsonr(x, y) if method == "pearson" else scipy.stats.spearmanr(x, y)
    value, p_value = float(result.statistic), float(result.pvalue)
    if not math.isfinite(value):
        return Correlation(None, None, n, f"{method} correlation is not finite")
    return Correlation(value, p_value if math.isfinite(p_value) else None, n)


# ----------------------------------------------------------------------------------------------- bootstrap


@dataclass(frozen=True, slots=True)
class _Clusters:
    """Per resampling cluster sufficient statistics for two-coder alpha (a cluster holds >= 1 unit)."""

    units: np.ndarray  # (C,) number of units in the cluster
    delta: np.ndarray  # (C,) sum over its units of delta(a, b): disagreement (nominal) or (a - b)^2
    counts: np.ndarray | None = (
        None  # nominal: (C, K) how often each category occurs among its 2*units values
    )
    s1: np.ndarray | None = None  # interval: (C,) sum of (centred) values
    s2: np.ndarray | None = None  # interval: (C,) sum of squared (centred) values


def _nominal_clusters(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> _Clusters:
    """``pairs[i]`` = (coder-a values, coder-b values) of cluster i's units."""
    cats = np.unique(np.concatenate([np.concatenate(p) for p in pairs])) if pairs else np.zeros(0)
    counts = np.zeros((len(pairs), cats.size))
    for i, (a, b) in enumerate(pairs):
        counts[i] = np.bincount(np.searchsorted(cats, np.concatenate([a, b])), minlength=cats.size)
    units = np.array([len(a) for a, _ in pairs], dtype=float)
    delta = np.array([float(np.sum(a != b)) for a, b in pairs])
    return _Clusters(units=units, delta=delta, counts=counts)


def _interval_clusters(a: np.ndarray, b: np.ndarray) -> _Clusters:
    """One unit per cluster; values are centred first (alpha is shift-invariant) for numerical stability."""
    centre = float(np.mean(np.concatenate([a, b]))) if a.size else 0.0
    ac, bc = a - centre, b - centre
    return _Clusters(units=np.ones(a.size), delta=(a - b) ** 2, s1=ac + bc, s2=ac**2 + bc**2)


def _alpha_from_weights(cl: _Clusters, weights: np.ndarray) -> np.ndarray:
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


def _bootstrap_ci(cl: _Clusters, point: Estimate, n_boot: int, seed: int, resampled: str) -> BootstrapCI:
    """Percentile CI: resample clusters with replacement ``n_boot`` times (seeded, so reruns agree)."""

    def empty(reason: str) -> BootstrapCI:
        return BootstrapCI(None, None, CI_LEVEL, n_boot, 0, resampled, reason)

    if point.value is None:
        return empty(f"no interval: {point.reason}")
    if n_boot == 0:
        return empty("bootstrap disabled (n_boot=0)")
    c = cl.units.size
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, c, size=(n_boot, c))
    weights = np.bincount((idx + c * np.arange(n_boot)[:, None]).ravel(), minlength=n_boot * c)
    alphas = _alpha_from_weights(cl, weights.reshape(n_boot, c).astype(float))
    alphas = alphas[np.isfinite(alphas)]
    if alphas.size == 0:
        return empty("alpha was undefined in every resample")
    tail = (1.0 - CI_LEVEL) / 2 * 100
    low, high = np.percentile(alphas, [tail, 100 - tail])
    dropped = n_boot - alphas.size
    note = f"{dropped} of {n_boot} resamples had undefined alpha and were dropped" if dropped else None
    return BootstrapCI(float(low), float(high), CI_LEVEL, n_boot, int(alphas.size), resampled, note)


# ------------------------------------------------------------------------------------------------ reports


def _binary(
    label: str, a: np.ndarray, b: np.ndarray, cl: _Clusters, n_boot: int, seed: int, resampled: str
) -> BinaryAgreement:
    agreements = int(np.sum(a == b))
    alpha = krippendorff_alpha(a, b, "nominal")
    return BinaryAgreement(
        label=label,
        units=int(a.size),
        agreements=agreements,
        raw_agreement=agreements / a.size if a.size else None,
        kappa=cohen_kappa(a, b),
        alpha=alpha,
        alpha_ci=_bootstrap_ci(cl, alpha, n_boot, seed, resampled),
    )


def _score(
    label: str, a: np.ndarray, b: np.ndarray, n_boot: int, seed: int, resampled: str
) -> ScoreAgreement:
    alpha = krippendorff_alpha(a, b, "interval")
    return ScoreAgreement(
        label=label,
        units=int(a.size),
        alpha=alpha,
        alpha_ci=_bootstrap_ci(_interval_clusters(a, b), alpha, n_boot, seed, resampled),
        pearson=correlation(a, b, "pearson"),
        spearman=correlation(a, b, "spearman"),
    )


def compare_labellers(
    a: LabellerSet, b: LabellerSet, *, n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED
) -> AgreementReport:
    """Compare two labellers on the units both labelled.

    Binary rows: contains_issue, correct_conclusion and pooled (each node gives one unit per label; the
    bootstrap resamples nodes, keeping a node's two labels together). Score rows: per-issue score, and
    per-question score = sum of the shared issue scores of each (generator, doc_id), resampling questions.
    Each statistic's bootstrap starts from ``seed``, so per-node statistics see the same resamples.
    """
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    shared: list[UnitKey] = sorted(set(a) & set(b))
    only_a = sorted(set(a) - set(b))
    only_b = sorted(set(b) - set(a))

    la = np.array([a[k] for k in shared], dtype=float).reshape(-1, 3)
    lb = np.array([b[k] for k in shared], dtype=float).reshape(-1, 3)
    ci_a, cc_a, sc_a = la.T
    ci_b, cc_b, sc_b = lb.T

    def per_unit(x: np.ndarray, y: np.ndarray) -> _Clusters:
        return _nominal_clusters([(x[i : i + 1], y[i : i + 1]) for i in range(x.size)])

    pooled_clusters = _nominal_clusters(
        [(np.array([ci_a[i], cc_a[i]]), np.array([ci_b[i], cc_b[i]])) for i in range(len(shared))]
    )
    binary = [
        _binary("contains_issue", ci_a, ci_b, per_unit(ci_a, ci_b), n_boot, seed, "issue nodes"),
        _binary("correct_conclusion", cc_a, cc_b, per_unit(cc_a, cc_b), n_boot, seed, "issue nodes"),
        _binary(
            "pooled",
            np.concatenate([ci_a, cc_a]),
            np.concatenate([ci_b, cc_b]),
            pooled_clusters,
            n_boot,
            seed,
            "issue nodes (both labels of a node kept together)",
        ),
    ]

    questions: dict[tuple[str, str], list[float]] = {}
    for key, sa, sb in zip(shared, sc_a, sc_b, strict=True):
        total = questions.setdefault(key[:2], [0.0, 0.0])
        total[0] += sa
        total[1] += sb
    q = np.array(list(questions.values()), dtype=float).reshape(-1, 2)
    scores = [
        _score("issue score", sc_a, sc_b, n_boot, seed, "issue nodes"),
        _score("question score", q[:, 0], q[:, 1], n_boot, seed, "questions"),
    ]
    return AgreementReport(
        labeller_a=a.name,
        labeller_b=b.name,
        units_a=len(a),
        units_b=len(b),
        shared=len(shared),
        only_a_count=len(only_a),
        only_b_count=len(only_b),
        only_a=[list(k) for k in only_a],
        only_b=[list(k) for k in only_b],
        n_boot=n_boot,
        seed=seed,
        binary=binary,
        scores=scores,
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
