"""Statistics core of the leaderboard: bootstrap CIs, paired tests, Holm correction, letter displays.

Systems (runs) are compared on the benchmark items they share, so every function takes per-item scores
with NaN marking a missing item. Everything is pure numpy/scipy and vectorised: item resamples and sign
flips are drawn once as matrices and shared by all systems/pairs, which keeps intervals comparable and
makes 10,000 resamples over dozens of systems cost matrix products rather than Python loops.

Results are small frozen dataclasses that ``dataclasses.asdict`` turns into JSON-ready dicts: values that
are undefined (no shared items, fewer than two items) are ``None`` with a ``reason`` instead of NaN.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import string
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import numpy as np
from scipy import special
from scipy import stats as sps

MetricKind = Literal["continuous", "binary"]
Label = str | int | float | bool

# Memory bounds: resample matrices are generated in chunks of at most this many (resample, item) cells
# (~16 MB as float64), and (systems/pairs x resamples) work matrices stay under _BLOCK_BYTES.
_CHUNK_CELLS = 1 << 21
_BLOCK_BYTES = 16 << 20
# Resample counts are cached between column blocks when they fit in ~64 MB, else regenerated from the seed.
_CACHE_CELLS = 1 << 23
EXACT_MAX_NONZERO = 20
"""Sign-flip tests enumerate all 2^m sign patterns when m (non-zero differences) is at most this."""
MCNEMAR_EXACT_BELOW = 25
"""McNemar uses the exact binomial test below this many discordant pairs, chi-square (cc) otherwise."""
_REL_TOL = 1e-9  # ties "|stat| >= |observed|" must survive summation-order rounding


# --------------------------------------------------------------------------------------------------
# Result types
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfidenceInterval:
    """Mean and percentile-bootstrap interval of one system over its scored items."""

    name: str | None
    mean: float | None
    low: float | None
    high: float | None
    n_items: int
    reason: str | None = None


@dataclass(frozen=True)
class BootstrapCIs:
    """Per-system intervals from one shared set of item resamples."""

    intervals: tuple[ConfidenceInterval, ...]
    n_resamples: int
    confidence: float
    seed: int


@dataclass(frozen=True)
class StratumCIs:
    """Per-system intervals restricted to the items of one stratum (e.g. hop count 2)."""

    stratum: Label
    n_items: int
    intervals: tuple[ConfidenceInterval, ...]


@dataclass(frozen=True)
class StratifiedCIs:
    """Intervals per stratum; each stratum is bootstrapped on its own items with the same seed."""

    strata: tuple[StratumCIs, ...]
    n_resamples: int
    confidence: float
    seed: int


@dataclass(frozen=True)
class PairedBootstrapResult:
    """Difference of means (a - b) on shared items, its percentile CI and a two-sided bootstrap p."""

    n_shared: int
    mean_a: float | None
    mean_b: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n_resamples: int
    confidence: float
    reason: str | None = None


@dataclass(frozen=True)
class PermutationTestResult:
    """Paired sign-flip test of the mean per-item difference (a - b) on shared items."""

    n_shared: int
    n_nonzero: int
    difference: float | None
    p_value: float | None
    method: Literal["exact", "monte-carlo"] | None
    n_permutations: int
    reason: str | None = None


@dataclass(frozen=True)
class McNemarResult:
    """McNemar test for paired 0/1 outcomes; b01 = a wrong & b right, b10 = a right & b wrong."""

    n_shared: int
    b01: int
    b10: int
    statistic: float | None
    p_value: float | None
    method: Literal["exact", "chi2-cc"] | None
    reason: str | None = None


@dataclass(frozen=True)
class HolmResult:
    """Holm step-down adjusted p-values (monotone, capped at 1) and rejections at ``alpha``."""

    adjusted: tuple[float, ...]
    reject: tuple[bool, ...]
    alpha: float


@dataclass(frozen=True)
class PairComparison:
    """One pairwise comparison; ``difference = mean_a - mean_b`` on the shared items.

    ``test`` names the test behind ``p_value``; ``p_adjusted`` is Holm over the family the caller ran.
    The CI and ``bootstrap_p`` are not multiplicity-adjusted.
    """

    system_a: str
    system_b: str
    n_shared: int
    mean_a: float | None
    mean_b: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    bootstrap_p: float | None
    test: str | None
    p_value: float | None
    p_adjusted: float | None
    significant: bool
    b01: int | None = None
    b10: int | None = None
    reason: str | None = None


@dataclass(frozen=True)
class SystemSummary:
    """A system's mean over its own scored items."""

    name: str
    mean: float | None
    n_items: int


@dataclass(frozen=True)
class LetterEntry:
    """One row of a compact letter display.

    ``letters`` is for people; ``groups`` holds the letter indices (0 = "a") for code, since past 52
    letters the display uses tokens like "a2" and characters alone no longer identify letters.
    """

    name: str
    mean: float
    letters: str
    groups: tuple[int, ...]


@dataclass(frozen=True)
class CompactLetterDisplay:
    """Systems ordered best first; systems sharing a letter are not significantly different."""

    entries: tuple[LetterEntry, ...]
    reason: str | None = None

    def letters_by_name(self) -> dict[str, str]:
        """Map each system name to its letters."""
        return {e.name: e.letters for e in self.entries}


@dataclass(frozen=True)
class AllPairsResult:
    """Every pairwise comparison, Holm-adjusted over the comparisons that had a p-value."""

    metric_kind: MetricKind
    alpha: float
    confidence: float
    n_resamples: int
    n_permutations: int
    seed: int
    systems: tuple[SystemSummary, ...]
    comparisons: tuple[PairComparison, ...]
    letters: CompactLetterDisplay


@dataclass(frozen=True)
class BestSet:
    """Systems not significantly different from the best-mean system (Holm over best-vs-others)."""

    best: str | None
    members: tuple[str, ...]
    comparisons: tuple[PairComparison, ...]
    alpha: float
    reason: str | None = None


# --------------------------------------------------------------------------------------------------
# Input handling
# --------------------------------------------------------------------------------------------------


def _as_matrix(scores: np.ndarray | Sequence[float] | Sequence[Sequence[float]]) -> np.ndarray:
    """(n_items,) or (n_systems, n_items) float matrix; NaN = missing, infinities are rejected."""
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2:
        raise ValueError(f"scores must be 1-D or 2-D (n_systems, n_items), got shape {x.shape}")
    if np.isinf(x).any():
        raise ValueError("scores contain infinities; use NaN for missing items")
    return x


def _as_pair(a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float]) -> np.ndarray:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"a and b must be 1-D with the same length, got {x.shape} and {y.shape}")
    return _as_matrix(np.stack([x, y]))


def _check_names(names: Sequence[str] | None, n_systems: int, required: bool) -> list[str | None]:
    if names is None:
        if required:
            raise ValueError("names are required")
        return [None] * n_systems
    names = list(names)
    if len(names) != n_systems:
        raise ValueError(f"{len(names)} names for {n_systems} systems")
    if len(set(names)) != len(names):
        raise ValueError("system names must be unique")
    return names


def _check_settings(n_resamples: int, confidence: float) -> None:
    if int(n_resamples) < 1:
        raise ValueError("n_resamples must be at least 1")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")


def _check_binary(x: np.ndarray) -> None:
    v = x[~np.isnan(x)]
    if not np.isin(v, (0.0, 1.0)).all():
        raise ValueError("binary metric scores must be 0, 1 or NaN (missing)")


def _opt(value: float | np.floating) -> float | None:
    """Python float, or None for NaN: JSON outputs never carry NaN."""
    f = float(value)
    return None if math.isnan(f) else f


# --------------------------------------------------------------------------------------------------
# Resampling machinery (shared by every bootstrap in this module)
# --------------------------------------------------------------------------------------------------


def _count_chunks(n_items: int, n_resamples: int, seed: int) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield (rows, counts) where counts[r, i] = times item i is drawn in resample r.

    Resampling as a count matrix turns every resampled mean into a row of ``counts @ values``. The
    chunk size depends only on ``n_items`` so a seed always gives the same resamples.
    """
    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_CELLS // max(n_items, 1))
    for start in range(0, n_resamples, rows):
        r = min(rows, n_resamples - start)
        idx = rng.integers(0, n_items, size=(r, n_items))
        idx += (np.arange(r) * n_items)[:, None]
        counts = np.bincount(idx.ravel(), minlength=r * n_items).reshape(r, n_items).astype(np.float64)
        yield slice(start, start + r), counts


def _count_source(
    n_items: int, n_resamples: int, seed: int
) -> Callable[[], Iterable[tuple[slice, np.ndarray]]]:
    """Cache the count chunks when small, otherwise regenerate them (identically) per column block."""
    if n_items * n_resamples <= _CACHE_CELLS:
        cached = list(_count_chunks(n_items, n_resamples, seed))
        return lambda: cached
    return lambda: _count_chunks(n_items, n_resamples, seed)


def _resampled_means(
    values: np.ndarray, mask: np.ndarray | None, n_resamples: int, seed: int
) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield (columns, means) blocks of bootstrap means, means shape (block, n_resamples).

    ``values`` is (n_items, k) with zeros where missing; ``mask`` (same shape, 1.0 = present) turns the
    mean into masked sum / masked count, NaN when a resample drew none of a column's items. Rows are
    columns so later quantiles and counts run over contiguous memory.
    """
    n_items, k = values.shape
    source = _count_source(n_items, n_resamples, seed)
    block = max(1, _BLOCK_BYTES // (8 * n_resamples))
    for c0 in range(0, k, block):
        cols = slice(c0, min(k, c0 + block))
        vt = values[:, cols].T
        mt = None if mask is None else mask[:, cols].T
        parts = []
        for _, counts in source():
            sums = vt @ counts.T
            if mt is None:
                sums /= n_items  # each resample has exactly n_items draws
            else:
                n_drawn = mt @ counts.T
                np.divide(sums, n_drawn, out=sums, where=n_drawn > 0)
                sums[n_drawn == 0] = np.nan
            parts.append(sums)
        yield cols, parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)


def _row_quantiles(boot: np.ndarray, qs: Sequence[float]) -> np.ndarray:
    """Linear-interpolated quantiles of each row ignoring NaN, shape (len(qs), rows); NaN if a row is
    all NaN. Vectorised because ``np.nanquantile`` loops in Python over rows."""
    nan = np.isnan(boot)
    if not nan.any():
        return np.quantile(boot, qs, axis=1)
    ordered = np.sort(boot, axis=1)  # NaN sort last
    n_valid = (~nan).sum(axis=1)
    last = np.maximum(n_valid - 1, 0)
    out = np.empty((len(qs), boot.shape[0]))
    for k, q in enumerate(qs):
        pos = q * last
        lo = np.floor(pos).astype(np.intp)
        hi = np.minimum(lo + 1, last)
        frac = pos - lo
        v_lo = np.take_along_axis(ordered, lo[:, None], axis=1)[:, 0]
        v_hi = np.take_along_axis(ordered, hi[:, None], axis=1)[:, 0]
        out[k] = np.where(n_valid > 0, v_lo + frac * (v_hi - v_lo), np.nan)
    return out


def _sign_chunks(n_items: int, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Random +-1 matrices; one row is one sign-flip relabelling of all items."""
    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_CELLS // max(n_items, 1))
    for start in range(0, n_resamples, rows):
        r = min(rows, n_resamples - start)
        yield rng.integers(0, 2, size=(r, n_items)).astype(np.float64) * 2.0 - 1.0


# --------------------------------------------------------------------------------------------------
# Bootstrap confidence intervals
# --------------------------------------------------------------------------------------------------


def bootstrap_ci(
    scores: np.ndarray | Sequence[float] | Sequence[Sequence[float]],
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    names: Sequence[str] | None = None,
) -> BootstrapCIs:
    """Mean and percentile bootstrap interval per system.

    ``scores`` is (n_items,) or (n_systems, n_items) with NaN = missing. Item indices are resampled
    once and shared by all systems so their intervals reflect the same item draws; a system with
    missing items uses masked sums/counts (resamples that drew none of its items are dropped).
    Intervals are clipped to the range of the system's scores, which no resampled mean can leave
    (this keeps a constant vector's interval an exact point despite rounding).
    """
    _check_settings(n_resamples, confidence)
    x = _as_matrix(scores)
    n_systems = x.shape[0]
    labels = _check_names(names, n_systems, required=False)
    valid = ~np.isnan(x)
    n_valid = valid.sum(axis=1)
    xz = np.where(valid, x, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = xz.sum(axis=1) / n_valid
    low = np.full(n_systems, np.nan)
    high = np.full(n_systems, np.nan)
    boot_rows = np.flatnonzero(n_valid >= 2)
    if boot_rows.size:
        sub_valid = valid[boot_rows]
        values = xz[boot_rows].T
        mask = None if sub_valid.all() else sub_valid.T.astype(np.float64)
        tail = (1.0 - confidence) / 2.0
        for cols, boot in _resampled_means(values, mask, int(n_resamples), seed):
            q = _row_quantiles(boot, [tail, 1.0 - tail])
            low[boot_rows[cols]], high[boot_rows[cols]] = q[0], q[1]
        for row in boot_rows:
            lo_val, hi_val = x[row, valid[row]].min(), x[row, valid[row]].max()
            low[row] = min(max(low[row], lo_val), hi_val)
            high[row] = min(max(high[row], lo_val), hi_val)
    intervals = []
    for s in range(n_systems):
        reason = None
        if n_valid[s] == 0:
            reason = "no scored items"
        elif n_valid[s] < 2:
            reason = "fewer than 2 scored items: no interval"
        elif math.isnan(low[s]):
            reason = "no resample drew any of this system's items"
        intervals.append(
            ConfidenceInterval(
                name=labels[s],
                mean=_opt(means[s]),
                low=_opt(low[s]),
                high=_opt(high[s]),
                n_items=int(n_valid[s]),
                reason=reason,
            )
        )
    return BootstrapCIs(tuple(intervals), int(n_resamples), float(confidence), int(seed))


def split_by_stratum(strata: np.ndarray | Sequence[Hashable]) -> tuple[tuple[Label, np.ndarray], ...]:
    """Group item positions by stratum label, labels sorted (first-appearance order if unsortable).

    Labels are converted to plain Python values so they serialise to JSON.
    """
    labels = [v.item() if isinstance(v, np.generic) else v for v in np.asarray(strata, dtype=object).ravel()]
    positions: dict[Hashable, list[int]] = {}
    for i, label in enumerate(labels):
        positions.setdefault(label, []).append(i)
    order = list(positions)
    with contextlib.suppress(TypeError):  # mixed label types: keep first-appearance order
        order = sorted(order)
    return tuple((label, np.asarray(positions[label], dtype=np.intp)) for label in order)


def stratified_bootstrap_ci(
    scores: np.ndarray | Sequence[float] | Sequence[Sequence[float]],
    strata: np.ndarray | Sequence[Hashable],
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    names: Sequence[str] | None = None,
) -> StratifiedCIs:
    """:func:`bootstrap_ci` on each stratum's items (e.g. hop count 1/2/3 or difficulty).

    Each stratum uses the same seed, so its result equals ``bootstrap_ci`` on that column subset.
    """
    x = _as_matrix(scores)
    labels = np.asarray(strata, dtype=object)
    if labels.ndim != 1 or labels.shape[0] != x.shape[1]:
        raise ValueError(f"strata must have one label per item ({x.shape[1]}), got shape {labels.shape}")
    out = []
    for label, idx in split_by_stratum(labels):
        res = bootstrap_ci(x[:, idx], n_resamples=n_resamples, confidence=confidence, seed=seed, names=names)
        out.append(StratumCIs(stratum=label, n_items=int(idx.size), intervals=res.intervals))
    return StratifiedCIs(tuple(out), int(n_resamples), float(confidence), int(seed))


# --------------------------------------------------------------------------------------------------
# Paired tests
# --------------------------------------------------------------------------------------------------


_Factors = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(values (n_items, n_systems), ia, ib): difference column c is values[:, ia[c]] - values[:, ib[c]].

Resampled means and sign-flip sums are linear, so for complete systems a pair's statistic is the
difference of two per-system statistics: a product over 50 systems replaces one over 1225 pairs."""


def _pair_resampled_means(
    d: np.ndarray, mask: np.ndarray | None, n_resamples: int, seed: int, factors: _Factors | None
) -> Iterator[tuple[slice, np.ndarray]]:
    """Blocks of resampled mean differences (block, n_resamples), via per-system means if factored."""
    if factors is None:
        yield from _resampled_means(d, mask, n_resamples, seed)
        return
    values, ia, ib = factors
    per_system = np.concatenate([b for _, b in _resampled_means(values, None, n_resamples, seed)])
    block = max(1, _BLOCK_BYTES // (8 * n_resamples))
    for c0 in range(0, ia.size, block):
        cols = slice(c0, min(ia.size, c0 + block))
        yield cols, per_system[ia[cols]] - per_system[ib[cols]]


def _paired_bootstrap_columns(
    d: np.ndarray,
    mask: np.ndarray | None,
    n_resamples: int,
    confidence: float,
    seed: int,
    factors: _Factors | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile CI and centred two-sided p for the mean of each column of differences d (n, k).

    ``d`` is zero and ``mask`` 0 where a pair does not share an item. The p-value shifts the bootstrap
    distribution to the null (mean 0): the share of resampled means at least as far from the estimate
    as the estimate is from 0, with the +1 correction. Resamples that drew no shared item are dropped.
    """
    k = d.shape[1]
    n_shared = d.shape[0] if mask is None else mask.sum(axis=0)
    est = d.sum(axis=0) / n_shared
    tol = _REL_TOL * (np.abs(d).max(axis=0) + np.finfo(np.float64).tiny)
    tail = (1.0 - confidence) / 2.0
    low, high, p = np.empty(k), np.empty(k), np.empty(k)
    for cols, boot in _pair_resampled_means(d, mask, n_resamples, seed, factors):
        q = _row_quantiles(boot, [tail, 1.0 - tail])
        low[cols], high[cols] = q[0], q[1]
        e = est[cols, None]
        reach = np.abs(e) - tol[cols, None]
        exceed = np.count_nonzero(boot >= e + reach, axis=1) + np.count_nonzero(boot <= e - reach, axis=1)
        if reach.size and (reach <= 0).any():  # estimate ~0: every resample is as extreme
            exceed = np.where(reach[:, 0] <= 0, np.inf, exceed)
        n_valid = boot.shape[1] - np.count_nonzero(np.isnan(boot), axis=1)
        p[cols] = np.minimum((np.minimum(exceed, n_valid) + 1.0) / (n_valid + 1.0), 1.0)
    if mask is None:
        dmin, dmax = d.min(axis=0), d.max(axis=0)
    else:
        shared = mask > 0
        dmin = np.where(shared, d, np.inf).min(axis=0)
        dmax = np.where(shared, d, -np.inf).max(axis=0)
    return np.clip(low, dmin, dmax), np.clip(high, dmin, dmax), p


def _signed_sums(x: np.ndarray) -> np.ndarray:
    """All 2^len(x) sums of +-x_i."""
    sums = np.zeros(1)
    for v in x:
        sums = np.concatenate([sums + v, sums - v])
    return sums


def _exact_sign_flip_p(d: np.ndarray) -> float:
    """Exact two-sided sign-flip p over all 2^m patterns of the non-zero differences d.

    Meet in the middle: sums of the two halves (2^(m/2) each) are combined with a sorted search,
    so m = 20 costs two 1024-element arrays instead of a million-row matrix.
    """
    m = d.size
    if m == 0:
        return 1.0
    threshold = abs(float(d.sum())) - _REL_TOL * float(np.abs(d).sum())
    if threshold <= 0.0:
        return 1.0
    left = _signed_sums(d[: m // 2])
    right = np.sort(_signed_sums(d[m // 2 :]))
    upper = right.size - np.searchsorted(right, threshold - left, side="left")
    lower = np.searchsorted(right, -threshold - left, side="right")
    return float((upper.sum() + lower.sum()) / 2.0**m)


def _sign_flip_columns(
    d: np.ndarray, n_permutations: int, seed: int, factors: _Factors | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two-sided sign-flip p per column of d (n_items, k), zeros for missing/tied items.

    Returns (p, exact flags, patterns used). Monte Carlo columns share one sign matrix, so all pairs
    cost a single matrix product (or, with ``factors``, a product per system and a subtraction per
    pair); zeros are unaffected by flips, so each column is a valid test on its own non-zero differences.
    """
    n, k = d.shape
    nonzero = (d != 0).sum(axis=0)
    exact = nonzero <= EXACT_MAX_NONZERO
    p = np.empty(k)
    used = np.where(exact, 2.0**nonzero, float(n_permutations))
    for c in np.flatnonzero(exact):
        col = d[:, c]
        p[c] = _exact_sign_flip_p(col[col != 0])
    mc = np.flatnonzero(~exact)
    if mc.size:
        dm = d[:, mc]
        threshold = np.abs(dm.sum(axis=0)) - _REL_TOL * np.abs(dm).sum(axis=0)
        if factors is not None:  # per-system sums round on the scale of the scores, not of d
            mass = np.abs(factors[0]).sum(axis=0)
            threshold -= 1e-12 * (mass[factors[1][mc]] + mass[factors[2][mc]])
        count = np.zeros(mc.size)
        for signs in _sign_chunks(n, n_permutations, seed):
            # Work in (columns, flips) layout so each pair's flips are contiguous.
            flipped = None if factors is None else factors[0].T @ signs.T  # (n_systems, r)
            block = max(1, _BLOCK_BYTES // (8 * signs.shape[0]))
            for c0 in range(0, mc.size, block):
                cols = slice(c0, c0 + block)
                if flipped is None:
                    stat = dm[:, cols].T @ signs.T
                else:  # signs @ (x_a - x_b) = signs @ x_a - signs @ x_b
                    stat = flipped[factors[1][mc[cols]]]
                    np.subtract(stat, flipped[factors[2][mc[cols]]], out=stat)
                np.abs(stat, out=stat)
                count[cols] += np.count_nonzero(stat >= threshold[cols, None], axis=1)
        p[mc] = (count + 1.0) / (n_permutations + 1.0)
    return p, exact, used


def _shared(x: np.ndarray, i: int, j: int) -> tuple[np.ndarray, int]:
    mask = ~np.isnan(x[i]) & ~np.isnan(x[j])
    return mask, int(mask.sum())


def paired_bootstrap(
    a: np.ndarray | Sequence[float],
    b: np.ndarray | Sequence[float],
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedBootstrapResult:
    """Bootstrap the difference of means (a - b) over the items both runs scored.

    The point estimate uses only shared items. The resampling unit is the benchmark item, as in
    :func:`bootstrap_ci`: each resample draws all item positions and averages the differences of the
    drawn shared ones (masked sum / count). With complete data this is the ordinary paired bootstrap;
    with missing items it uses the same draws as every other system and pair, which keeps CIs
    comparable and lets :func:`all_pairs` compute all pairs with two matrix products.
    """
    _check_settings(n_resamples, confidence)
    x = _as_pair(a, b)
    mask, n_shared = _shared(x, 0, 1)
    none = PairedBootstrapResult(n_shared, None, None, None, None, None, None, int(n_resamples), confidence)
    if n_shared == 0:
        return dataclasses.replace(none, reason="no shared items")
    xa, xb = x[0, mask], x[1, mask]
    d = np.where(mask, x[0] - x[1], 0.0)
    base = dataclasses.replace(
        none, mean_a=float(xa.mean()), mean_b=float(xb.mean()), difference=float(d.sum() / n_shared)
    )
    if n_shared < 2:
        return dataclasses.replace(base, reason="fewer than 2 shared items")
    m = None if mask.all() else mask.astype(np.float64)[:, None]
    low, high, p = _paired_bootstrap_columns(d[:, None], m, int(n_resamples), confidence, seed)
    return dataclasses.replace(base, ci_low=_opt(low[0]), ci_high=_opt(high[0]), p_value=_opt(p[0]))


def paired_permutation_test(
    a: np.ndarray | Sequence[float],
    b: np.ndarray | Sequence[float],
    n_permutations: int = 10_000,
    seed: int = 0,
) -> PermutationTestResult:
    """Paired sign-flip test: under H0 each per-item difference is equally likely to have either sign.

    Two-sided on |sum of differences|. Exact over all 2^m patterns when m (non-zero differences) is
    at most 20; otherwise Monte Carlo with p = (count + 1) / (n_permutations + 1), which never
    reports 0 for a finite sample. All-zero differences (identical runs) give p = 1.
    """
    if int(n_permutations) < 1:
        raise ValueError("n_permutations must be at least 1")
    x = _as_pair(a, b)
    mask, n_shared = _shared(x, 0, 1)
    d = np.where(mask, x[0] - x[1], 0.0)
    n_nonzero = int((d != 0).sum())
    if n_shared < 2:
        reason = "no shared items" if n_shared == 0 else "fewer than 2 shared items"
        diff = float(d.sum() / n_shared) if n_shared else None
        return PermutationTestResult(n_shared, n_nonzero, diff, None, None, 0, reason)
    p, exact, used = _sign_flip_columns(d[:, None], int(n_permutations), seed)
    return PermutationTestResult(
        n_shared=n_shared,
        n_nonzero=n_nonzero,
        difference=float(d.sum() / n_shared),
        p_value=float(p[0]),
        method="exact" if exact[0] else "monte-carlo",
        n_permutations=int(used[0]),
        reason="all differences are zero" if n_nonzero == 0 else None,
    )


def _mcnemar_counts(n_shared: int, b01: int, b10: int) -> McNemarResult:
    n_disc = b01 + b10
    if n_disc == 0:
        return McNemarResult(n_shared, b01, b10, 0.0, 1.0, "exact", "no discordant pairs")
    if n_disc < MCNEMAR_EXACT_BELOW:
        p = sps.binomtest(b10, n_disc, 0.5, alternative="two-sided").pvalue
        return McNemarResult(n_shared, b01, b10, float(min(b01, b10)), min(float(p), 1.0), "exact")
    stat = max(abs(b01 - b10) - 1, 0) ** 2 / n_disc
    # chdtrc(1, x) is chi2(1).sf(x) as a plain ufunc: all_pairs calls this once per pair.
    return McNemarResult(n_shared, b01, b10, float(stat), float(special.chdtrc(1, stat)), "chi2-cc")


def mcnemar(a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float]) -> McNemarResult:
    """McNemar test on paired 0/1 outcomes over shared items.

    Only discordant pairs carry information. Exact binomial (p = 1/2) below 25 discordant pairs,
    where the chi-square approximation is poor; chi-square with continuity correction otherwise.
    ``statistic`` is min(b01, b10) for the exact test and the chi-square value otherwise.
    """
    x = _as_pair(a, b)
    _check_binary(x)
    mask, n_shared = _shared(x, 0, 1)
    b01 = int(((x[0] == 0) & (x[1] == 1) & mask).sum())
    b10 = int(((x[0] == 1) & (x[1] == 0) & mask).sum())
    if n_shared < 2:
        reason = "no shared items" if n_shared == 0 else "fewer than 2 shared items"
        return McNemarResult(n_shared, b01, b10, None, None, None, reason)
    return _mcnemar_counts(n_shared, b01, b10)


# --------------------------------------------------------------------------------------------------
# Multiple comparisons
# --------------------------------------------------------------------------------------------------


def holm_bonferroni(pvalues: Sequence[float] | np.ndarray, alpha: float = 0.05) -> HolmResult:
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
    return HolmResult(
        adjusted=tuple(float(v) for v in adjusted),
        reject=tuple(bool(v <= alpha) for v in adjusted),
        alpha=float(alpha),
    )


def _letter(k: int) -> str:
    """a-z, A-Z, then a2..z2, a3.. (unique tokens; a display that long is a warning in itself)."""
    alphabet = string.ascii_lowercase + string.ascii_uppercase
    return alphabet[k] if k < len(alphabet) else f"{alphabet[k % 26]}{k // 26}"


def compact_letters(
    names: Sequence[str],
    means: Sequence[float],
    significant_pairs: Iterable[tuple[str, str]],
    higher_is_better: bool = True,
    max_letters: int | None = None,
) -> CompactLetterDisplay:
    """Compact letter display by Piepho's (2004) insert-and-absorb algorithm with a final sweep.

    Start with one letter shared by all; for each significant pair split every letter containing
    both (one copy without each) and absorb letters that are subsets of others; then sweep letters
    that are not needed for any non-significant pair. Letters are ordered by their best member, so
    the best system gets "a".

    Letters are the maximal groups of mutually indistinguishable systems, which an irregular
    significance pattern can make exponentially many. Past ``max_letters`` (default max(52, 3n)) the
    display is abandoned: entries get empty letters and ``reason`` says why, instead of hanging.
    """
    names = _check_names(names, len(names), required=True)
    if len(means) != len(names):
        raise ValueError(f"{len(means)} means for {len(names)} systems")
    sign = -1.0 if higher_is_better else 1.0
    rank_order = sorted(range(len(names)), key=lambda i: (sign * float(means[i]), i))
    rank = {names[i]: r for r, i in enumerate(rank_order)}
    sig: set[frozenset[int]] = set()
    for u, v in significant_pairs:
        if u not in rank or v not in rank:
            raise ValueError(f"unknown system in significant pair ({u!r}, {v!r})")
        if u != v:
            sig.add(frozenset((rank[u], rank[v])))
    n = len(names)
    limit = max(52, 3 * n) if max_letters is None else max_letters
    columns: list[set[int]] = [set(range(n))] if n else []
    for i, j in sorted(tuple(sorted(p)) for p in sig):
        kept = [col for col in columns if not (i in col and j in col)]
        split = [col for col in columns if i in col and j in col]
        if split:
            columns = kept + _absorb_new(kept, [c for col in split for c in (col - {i}, col - {j})])
        if len(columns) > limit:
            blank = (LetterEntry(str(names[i]), float(means[i]), "", ()) for i in rank_order)
            reason = f"significance pattern needs more than {limit} letters; no letter display"
            return CompactLetterDisplay(tuple(blank), reason)
    columns = _sweep(columns, sig)
    columns.sort(key=lambda col: sorted(col))
    entries = []
    for r, i in enumerate(rank_order):
        groups = tuple(k for k, col in enumerate(columns) if r in col)
        letters = "".join(_letter(k) for k in groups)
        entries.append(LetterEntry(name=str(names[i]), mean=float(means[i]), letters=letters, groups=groups))
    return CompactLetterDisplay(tuple(entries))


def _absorb_new(kept: list[set[int]], new: list[set[int]]) -> list[set[int]]:
    """Absorb after a split: only the new letters can be redundant, as the kept ones were already
    not subsets of the letter that was split (which contains every new letter)."""
    out: list[set[int]] = []
    for k, col in enumerate(new):
        if any(col <= other for other in kept):
            continue
        if any(col < other or (col == other and m < k) for m, other in enumerate(new) if m != k):
            continue
        out.append(col)
    return out


def _absorb(columns: list[set[int]]) -> list[set[int]]:
    """Drop letters whose members are a subset of another letter's (duplicates keep one copy)."""
    kept: list[set[int]] = []
    for k, col in enumerate(columns):
        dominated = any(
            (col < other) or (col == other and m < k) for m, other in enumerate(columns) if m != k
        )
        if not dominated:
            kept.append(col)
    return kept


def _sweep(columns: list[set[int]], sig: set[frozenset[int]]) -> list[set[int]]:
    """Remove a system from a letter when every non-significant link it has there exists elsewhere."""
    columns = [set(c) for c in columns]
    for k, col in enumerate(columns):
        for i in sorted(col):
            others = [c for m, c in enumerate(columns) if m != k]
            if not any(i in c for c in others):
                continue  # its only letter
            needed = any(
                frozenset((i, j)) not in sig and not any(i in c and j in c for c in others)
                for j in col
                if j != i
            )
            if not needed:
                col.discard(i)
    return _absorb([c for c in columns if c])


# --------------------------------------------------------------------------------------------------
# Pairwise comparisons over a score matrix
# --------------------------------------------------------------------------------------------------


def _compare_pairs(
    x: np.ndarray,
    names: list[str],
    pairs: list[tuple[int, int]],
    metric_kind: MetricKind,
    n_resamples: int,
    n_permutations: int,
    confidence: float,
    seed: int,
) -> list[PairComparison]:
    """Unadjusted comparisons for the given (a, b) index pairs, vectorised across pairs.

    All pairs share one item-resample matrix and one sign matrix, exactly as :func:`paired_bootstrap`
    and :func:`paired_permutation_test` draw them, so results match the single-pair functions for the
    same seed while costing a few matrix products instead of a Python loop.
    """
    if not pairs:
        return []
    ia = np.array([p[0] for p in pairs])
    ib = np.array([p[1] for p in pairs])
    valid = ~np.isnan(x)
    xz = np.where(valid, x, 0.0)
    shared = valid[ia] & valid[ib]  # (P, n)
    n_shared = shared.sum(axis=1)
    diffs = np.where(shared, xz[ia] - xz[ib], 0.0)  # (P, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_a = (xz[ia] * shared).sum(axis=1) / n_shared
        mean_b = (xz[ib] * shared).sum(axis=1) / n_shared
        difference = diffs.sum(axis=1) / n_shared
    n_pairs = len(pairs)
    low, high, boot_p = np.full(n_pairs, np.nan), np.full(n_pairs, np.nan), np.full(n_pairs, np.nan)
    p_value = np.full(n_pairs, np.nan)
    exact = np.zeros(n_pairs, dtype=bool)
    ok = n_shared >= 2
    complete = valid.all(axis=1)
    factored = complete[ia] & complete[ib]
    # Pairs of complete systems go through per-system statistics; the rest need per-pair products.
    for subset in (np.flatnonzero(ok & factored), np.flatnonzero(ok & ~factored)):
        if not subset.size:
            continue
        d = diffs[subset].T
        sub = shared[subset]
        m = None if sub.all() else sub.T.astype(np.float64)
        factors = (xz.T, ia[subset], ib[subset]) if factored[subset[0]] else None
        low[subset], high[subset], boot_p[subset] = _paired_bootstrap_columns(
            d, m, n_resamples, confidence, seed, factors
        )
        if metric_kind == "continuous":
            p_value[subset], exact[subset], _ = _sign_flip_columns(d, n_permutations, seed, factors)
    ok_idx = np.flatnonzero(ok)
    tests: list[str | None] = [None] * n_pairs
    b01 = b10 = None
    if metric_kind == "continuous":
        for c in ok_idx:
            tests[c] = "sign-flip-exact" if exact[c] else "sign-flip-monte-carlo"
    else:
        b01 = ((x[ia] == 0) & (x[ib] == 1) & shared).sum(axis=1)
        b10 = ((x[ia] == 1) & (x[ib] == 0) & shared).sum(axis=1)
        for c in ok_idx:
            res = _mcnemar_counts(int(n_shared[c]), int(b01[c]), int(b10[c]))
            p_value[c] = res.p_value
            tests[c] = f"mcnemar-{res.method}"
    out = []
    for c, (i, j) in enumerate(pairs):
        reason = None
        if n_shared[c] == 0:
            reason = "no shared items"
        elif n_shared[c] < 2:
            reason = "fewer than 2 shared items"
        out.append(
            PairComparison(
                system_a=names[i],
                system_b=names[j],
                n_shared=int(n_shared[c]),
                mean_a=_opt(mean_a[c]),
                mean_b=_opt(mean_b[c]),
                difference=_opt(difference[c]),
                ci_low=_opt(low[c]),
                ci_high=_opt(high[c]),
                bootstrap_p=_opt(boot_p[c]),
                test=tests[c],
                p_value=_opt(p_value[c]),
                p_adjusted=None,
                significant=False,
                b01=None if b01 is None else int(b01[c]),
                b10=None if b10 is None else int(b10[c]),
                reason=reason,
            )
        )
    return out


def family_permutations(n_comparisons: int, alpha: float, minimum: int = 10_000) -> int:
    """Monte Carlo sign flips needed so the floor p = 1/(R+1) cannot by itself block Holm.

    Holm multiplies the smallest p by the family size m; with R flips the smallest attainable p is
    1/(R+1), so R < m/alpha makes every comparison non-significant no matter the data (1225 pairs at
    R = 10,000 give a floor of 0.12). Using R >= 2m/alpha leaves room for a few exceedances.
    """
    return max(int(minimum), math.ceil(2 * n_comparisons / alpha))


def _holm_comparisons(comparisons: list[PairComparison], alpha: float) -> list[PairComparison]:
    """Holm over the comparisons that have a p-value; undefined ones stay unadjusted and not significant."""
    tested = [k for k, c in enumerate(comparisons) if c.p_value is not None]
    holm = holm_bonferroni([comparisons[k].p_value for k in tested], alpha)  # type: ignore[misc]
    out = list(comparisons)
    for k, adj, rej in zip(tested, holm.adjusted, holm.reject, strict=True):
        out[k] = dataclasses.replace(out[k], p_adjusted=adj, significant=rej)
    return out


def _prepare(
    matrix: np.ndarray | Sequence[Sequence[float]],
    names: Sequence[str],
    metric_kind: str,
    n_resamples: int,
    confidence: float,
    alpha: float,
) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray]:
    _check_settings(n_resamples, confidence)
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be in (0, 1)")
    if metric_kind not in ("continuous", "binary"):
        raise ValueError(f"metric_kind must be 'continuous' or 'binary', got {metric_kind!r}")
    x = _as_matrix(matrix)
    if np.asarray(matrix).size == 0 and len(names) == 0:
        x = np.zeros((0, 0))
    labels = [str(n) for n in _check_names(names, x.shape[0], required=True)]
    if metric_kind == "binary":
        _check_binary(x)
    valid = ~np.isnan(x)
    n_valid = valid.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(valid, x, 0.0).sum(axis=1) / n_valid
    return x, labels, means, n_valid


def all_pairs(
    matrix: np.ndarray | Sequence[Sequence[float]],
    names: Sequence[str],
    metric_kind: MetricKind = "continuous",
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    alpha: float = 0.05,
    seed: int = 0,
    higher_is_better: bool = True,
    n_permutations: int | None = None,
) -> AllPairsResult:
    """Compare every pair of systems on their shared items, Holm-adjusted over all comparisons made.

    ``matrix`` is (n_systems, n_items), NaN = missing. Continuous metrics (F1 etc.) use the paired
    sign-flip test; binary metrics (exact match) use McNemar. Both get a paired bootstrap CI of the
    difference. ``n_permutations`` defaults to :func:`family_permutations` for the number of pairs.
    The compact letter display uses the Holm-significant pairs.
    """
    x, labels, means, n_valid = _prepare(matrix, names, metric_kind, n_resamples, confidence, alpha)
    pairs = list(combinations(range(x.shape[0]), 2))
    n_perm = family_permutations(len(pairs), alpha, n_resamples) if n_permutations is None else n_permutations
    comps = _holm_comparisons(
        _compare_pairs(x, labels, pairs, metric_kind, int(n_resamples), int(n_perm), confidence, seed), alpha
    )
    systems = tuple(SystemSummary(labels[s], _opt(means[s]), int(n_valid[s])) for s in range(len(labels)))
    scored = [s for s in systems if s.mean is not None]
    letters = compact_letters(
        [s.name for s in scored],
        [s.mean for s in scored],  # type: ignore[misc]
        [(c.system_a, c.system_b) for c in comps if c.significant],
        higher_is_better=higher_is_better,
    )
    return AllPairsResult(
        metric_kind=metric_kind,
        alpha=float(alpha),
        confidence=float(confidence),
        n_resamples=int(n_resamples),
        n_permutations=int(n_perm),
        seed=int(seed),
        systems=systems,
        comparisons=tuple(comps),
        letters=letters,
    )


def indistinguishable_from_best(
    matrix: np.ndarray | Sequence[Sequence[float]],
    names: Sequence[str],
    metric_kind: MetricKind = "continuous",
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    alpha: float = 0.05,
    seed: int = 0,
    higher_is_better: bool = True,
    n_permutations: int | None = None,
) -> BestSet:
    """Systems whose difference from the best-mean system is not significant after Holm.

    The family is the best-vs-other comparisons only (fewer tests than all pairs, so more power).
    A system with scored items but too few shared items to test cannot be shown worse and is kept;
    systems with no scored items are left out. Members are ordered best first.
    """
    x, labels, means, _ = _prepare(matrix, names, metric_kind, n_resamples, confidence, alpha)
    scored = np.flatnonzero(~np.isnan(means))
    if scored.size == 0:
        reason = "no systems" if not labels else "no system has scored items"
        return BestSet(None, (), (), float(alpha), reason)
    sign = 1.0 if higher_is_better else -1.0
    best = int(scored[np.argmax(sign * means[scored])])
    others = [s for s in range(len(labels)) if s != best]
    n_perm = (
        family_permutations(len(others), alpha, n_resamples) if n_permutations is None else n_permutations
    )
    pairs = [(best, s) for s in others]
    comps = _holm_comparisons(
        _compare_pairs(x, labels, pairs, metric_kind, int(n_resamples), int(n_perm), confidence, seed), alpha
    )
    has_items = set(scored.tolist())
    keep = [best] + [s for s, c in zip(others, comps, strict=True) if not c.significant and s in has_items]
    keep.sort(key=lambda s: (-sign * means[s], s))
    return BestSet(labels[best], tuple(labels[s] for s in keep), tuple(comps), float(alpha))
