"""Multiple comparisons: Holm's step-down adjustment and how many sign flips a family of tests needs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class HolmAdjustment:
    """Holm step-down adjusted p-values (monotone, capped at 1) and rejections at ``alpha``."""

    adjusted: tuple[float, ...]
    reject: tuple[bool, ...]
    alpha: float


def holm_bonferroni(pvalues: Sequence[float] | np.ndarray, alpha: float = 0.05) -> HolmAdjustment:
    """Holm step-down adjustment: controls the family-wise error rate, uniformly more powerful than
    Bonferroni. Adjusted p_(i) = max_{j<=i} min(1, (m - j + 1) p_(j)) over ascending p."""
    p = np.asarray(pvalues, dtype=np.float64).ravel()
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("p-values must be in [0, 1] (drop undefined comparisons first)")
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return HolmAdjustment(
        adjusted=tuple(float(v) for v in adjusted),
        reject=tuple(bool(v <= alpha) for v in adjusted),
        alpha=float(alpha),
    )


def holm_where_defined(
    pvalues: Sequence[float | None], alpha: float = 0.05
) -> list[tuple[float, bool] | None]:
    """Holm over the p-values that exist: (adjusted p, reject) in input order, None where a comparison
    could not be tested (it neither counts in the family nor is adjusted)."""
    holm = holm_bonferroni([p for p in pvalues if p is not None], alpha)
    decisions = iter(zip(holm.adjusted, holm.reject, strict=True))
    return [None if p is None else next(decisions) for p in pvalues]


def family_permutations(n_comparisons: int, alpha: float, minimum: int = 10_000) -> int:
    """Monte Carlo sign flips needed so the floor p = 1/(R+1) cannot by itself block Holm.

    Holm multiplies the smallest p by the family size m; with R flips the smallest attainable p is
    1/(R+1), so R < m/alpha makes every comparison non-significant no matter the data (1225 pairs at
    R = 10,000 give a floor of 0.12). Using R >= 2m/alpha leaves room for a few exceedances.
    """
    return max(int(minimum), math.ceil(2 * n_comparisons / alpha))
