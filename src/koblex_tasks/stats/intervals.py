"""Mean and percentile-bootstrap interval per system, overall and per stratum.

A system's interval is computed over its own scored (non-NaN) items in the given item order, so the log
metric (one run's scored samples sorted by id: :func:`mean_interval`) and the leaderboard (runs x sorted
item ids, NaN = unscored: :func:`bootstrap_ci`) give bit-identical intervals for the same scores,
resamples and seed.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from koblex_tasks.stats.inputs import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Scores,
    Vector,
    as_matrix,
    check_settings,
    optional_names,
)
from koblex_tasks.stats.resampling import own_means, percentile_bounds, resampled_own_means

Label = str | int | float | bool
"""A stratum label (hop count, difficulty), kept as a plain Python value so it serialises to JSON."""


@dataclass(frozen=True)
class Interval:
    """A system's mean and percentile-bootstrap interval over its own scored items."""

    name: str | None
    mean: float | None
    low: float | None
    high: float | None
    n_items: int
    reason: str | None = None


@dataclass(frozen=True)
class Intervals:
    """Every system's interval over one set of items (all of them, or one stratum), from one seed."""

    stratum: Label | None
    n_items: int
    intervals: tuple[Interval, ...]
    n_resamples: int
    confidence: float
    seed: int


@dataclass(frozen=True)
class StratifiedIntervals:
    """Intervals per stratum, strata sorted by label; each equals :func:`bootstrap_ci` on its items."""

    strata: tuple[Intervals, ...]


def _interval(
    name: str | None, values: np.ndarray, mean: float, bounds: tuple[float, float] | None
) -> Interval:
    """One system's Interval from its scored values, their mean and the (unclipped) percentile bounds.

    Mean and bounds are clipped to the range of the values, which no (resampled) mean can leave: this
    keeps a constant vector's interval the exact point despite rounding.
    """
    n = int(values.size)
    if n == 0:
        return Interval(name, None, None, None, 0, "no scored items")
    lo, hi = float(values.min()), float(values.max())
    mean = min(max(mean, lo), hi)
    if n < 2 or bounds is None:
        return Interval(name, mean, None, None, n, "fewer than 2 scored items: no interval")
    low, high = (min(max(b, lo), hi) for b in bounds)
    return Interval(name, mean, low, high, n)


def system_resamples(x: np.ndarray, n_resamples: int, seed: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(system rows, resampled means)`` of every system with 2+ scored items, each over its own."""
    valid = ~np.isnan(x)
    rows = np.flatnonzero(valid.sum(axis=1) >= 2)
    for block, means in resampled_own_means(np.where(valid, x, 0.0)[rows], valid[rows], n_resamples, seed):
        yield rows[block], means


def intervals_from_resamples(
    x: np.ndarray,
    names: Sequence[str | None],
    resamples: Iterable[tuple[np.ndarray, np.ndarray]],
    confidence: float,
) -> tuple[Interval, ...]:
    """Intervals of the rows of ``x`` from the :func:`system_resamples` blocks (or the same, kept)."""
    bounds: dict[int, tuple[float, float]] = {}
    for rows, means in resamples:
        low, high = percentile_bounds(means, confidence)
        bounds.update((int(r), (float(lo), float(hi))) for r, lo, hi in zip(rows, low, high, strict=True))
    valid = ~np.isnan(x)
    means = own_means(np.where(valid, x, 0.0), valid)
    return tuple(
        _interval(names[s], x[s, valid[s]], float(means[s]), bounds.get(s)) for s in range(x.shape[0])
    )


def bootstrap_ci(
    scores: Scores,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    names: Sequence[str] | None = None,
) -> Intervals:
    """Mean and percentile-bootstrap interval per system.

    ``scores`` is (n_items,) or (n_systems, n_items) with NaN = unscored. Each system is bootstrapped on
    its own scored items; systems with the same number of scored items share one draw, which is what
    keeps a board of many systems a few matrix products.
    """
    check_settings(n_resamples, confidence)
    x = as_matrix(scores)
    labels = optional_names(names, x.shape[0])
    n = int(n_resamples)
    intervals = intervals_from_resamples(x, labels, system_resamples(x, n, seed), confidence)
    return Intervals(None, x.shape[1], intervals, n, float(confidence), int(seed))


def mean_interval(
    values: Vector,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> tuple[float | None, float | None]:
    """(low, high) of one run's interval, as the log metric reports it: NaN items are left out, and the
    result equals that run's row of :func:`bootstrap_ci` on any matrix holding it."""
    x = np.asarray(values, dtype=np.float64).ravel()
    ci = bootstrap_ci(x, n_resamples, confidence, seed).intervals[0]
    return ci.low, ci.high


def split_by_stratum(strata: np.ndarray | Sequence[Hashable]) -> tuple[tuple[Label, np.ndarray], ...]:
    """Group item positions by stratum label, labels sorted (first-appearance order if unsortable).

    Labels are converted to plain Python values so they serialise to JSON.
    """
    labels: list[Any] = [
        v.item() if isinstance(v, np.generic) else v for v in np.asarray(strata, dtype=object).ravel()
    ]
    positions: dict[Any, list[int]] = {}
    for i, label in enumerate(labels):
        positions.setdefault(label, []).append(i)
    order = list(positions)
    with contextlib.suppress(TypeError):  # mixed label types: keep first-appearance order
        order = sorted(order)
    return tuple((label, np.asarray(positions[label], dtype=np.intp)) for label in order)


def stratified_bootstrap_ci(
    scores: Scores,
    strata: np.ndarray | Sequence[Hashable],
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    names: Sequence[str] | None = None,
) -> StratifiedIntervals:
    """:func:`bootstrap_ci` on each stratum's items (e.g. hop count 1/2/3 or difficulty), same seed each."""
    x = as_matrix(scores)
    labels = np.asarray(strata, dtype=object)
    if labels.ndim != 1 or labels.shape[0] != x.shape[1]:
        raise ValueError(f"strata must have one label per item ({x.shape[1]}), got shape {labels.shape}")
    out = []
    for label, idx in split_by_stratum(labels):
        out.append(
            dataclasses.replace(bootstrap_ci(x[:, idx], n_resamples, confidence, seed, names), stratum=label)
        )
    return StratifiedIntervals(tuple(out))
