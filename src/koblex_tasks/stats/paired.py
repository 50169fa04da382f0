"""Paired comparison of runs on the items both scored: bootstrap CI of the difference, sign-flip test, McNemar.

The paired bootstrap resamples each pair's own shared items, in item order, like every interval of the
engine: the CI of a - b is exactly the bootstrap interval of the vector of shared differences, whatever
other items the matrix holding the pair has. The sign-flip test draws one sign per item position of the
matrix, shared by all pairs (one stream for a whole board; zeros of non-shared items are unaffected by
flips, so each pair's test is exact on its own items, and its Monte Carlo p matches
:func:`paired_permutation_test` on the same two rows). The engines work on a batch of pairs at once;
the single-pair functions here and :mod:`koblex_tasks.stats.comparisons` run the same code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from koblex_tasks.stats.inputs import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Vector,
    as_pair,
    check_binary,
    check_settings,
    opt,
)
from koblex_tasks.stats.resampling import (
    block_rows,
    own_means,
    percentile_bounds,
    resampled_own_means,
    sign_chunks,
)

EXACT_MAX_NONZERO = 20
"""Sign-flip tests enumerate all 2^m sign patterns when m (non-zero differences) is at most this."""
MCNEMAR_EXACT_BELOW = 25
"""McNemar uses the exact binomial test below this many discordant pairs, chi-square (cc) otherwise."""
_REL_TOL = 1e-9  # ties "|stat| >= |observed|" must survive summation-order rounding


@dataclass(frozen=True)
class PairedDifference:
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
class PairedTest:
    """A paired significance test of a against b on their shared items.

    ``test`` is "sign-flip" (continuous scores) or "mcnemar" (0/1 outcomes). ``n_nonzero`` counts the
    shared items where a and b differ, the only ones either test learns from (for 0/1 outcomes they are
    McNemar's discordant pairs, ``b01 + b10``). ``statistic`` is the sum of the differences for the
    sign-flip test, min(b01, b10) for exact McNemar and the chi-square value otherwise.
    ``n_permutations`` is the number of sign patterns behind a sign-flip p (0 for McNemar).
    """

    test: Literal["sign-flip", "mcnemar"]
    method: Literal["exact", "monte-carlo", "chi2-cc"] | None
    n_shared: int
    n_nonzero: int
    difference: float | None
    statistic: float | None
    p_value: float | None
    n_permutations: int = 0
    b01: int | None = None
    b10: int | None = None
    reason: str | None = None


def undefined_reason(n_shared: int) -> str | None:
    """Why a pair has no test or interval, or None when it has at least two shared items."""
    if n_shared == 0:
        return "no shared items"
    return "fewer than 2 shared items" if n_shared < 2 else None


# --------------------------------------------------------------------------------------------------
# Batches of pairs
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairBatch:
    """Pairs (ia[c], ib[c]) of rows of a score matrix ``x`` (NaN = unscored), with their shared items.

    ``d`` holds x_a - x_b on shared items and 0 elsewhere. ``same_items`` marks pairs whose two systems
    scored exactly the same items: their resampled and sign-flipped statistics are differences of
    per-system ones (both are linear), so 50 per-system products replace 1,225 per-pair ones.
    """

    x: np.ndarray
    ia: np.ndarray
    ib: np.ndarray
    shared: np.ndarray
    d: np.ndarray
    n_shared: np.ndarray
    same_items: np.ndarray

    @classmethod
    def of(cls, x: np.ndarray, pairs: Sequence[tuple[int, int]]) -> PairBatch:
        ia = np.array([p[0] for p in pairs], dtype=np.intp)
        ib = np.array([p[1] for p in pairs], dtype=np.intp)
        valid = ~np.isnan(x)
        shared = valid[ia] & valid[ib]
        d = np.where(shared, np.where(valid, x, 0.0)[ia] - np.where(valid, x, 0.0)[ib], 0.0)
        same = (valid[ia] == valid[ib]).all(axis=1) if ia.size else np.zeros(0, dtype=bool)
        return cls(x, ia, ib, shared, d, shared.sum(axis=1), same)

    def means(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean_a, mean_b, mean difference) over each pair's shared items; NaN without any."""
        xz = np.where(np.isnan(self.x), 0.0, self.x)
        return (
            own_means(xz[self.ia], self.shared),
            own_means(xz[self.ib], self.shared),
            own_means(self.d, self.shared),
        )


def _single(a: Vector, b: Vector) -> PairBatch:
    return PairBatch.of(as_pair(a, b), [(0, 1)])


# --------------------------------------------------------------------------------------------------
# Paired bootstrap
# --------------------------------------------------------------------------------------------------


def _pair_resamples(
    batch: PairBatch, rows: np.ndarray, n_resamples: int, seed: int, system_resamples: np.ndarray | None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(positions in rows, resampled mean differences)``; same-item pairs via per-system resamples."""
    factored = np.zeros(rows.size, dtype=bool)
    if system_resamples is not None:
        factored = batch.same_items[rows]
        f = np.flatnonzero(factored)
        block = block_rows(n_resamples)
        for b0 in range(0, f.size, block):
            idx = f[b0 : b0 + block]
            yield idx, system_resamples[batch.ia[rows[idx]]] - system_resamples[batch.ib[rows[idx]]]
    u = np.flatnonzero(~factored)
    if u.size:
        for idx, boot in resampled_own_means(batch.d[rows[u]], batch.shared[rows[u]], n_resamples, seed):
            yield u[idx], boot


def _centred_p(boot: np.ndarray, estimate: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """Two-sided bootstrap p: the share of resampled means at least as far from the estimate as the
    estimate is from 0 (the distribution shifted to the null), with the +1 correction."""
    e = estimate[:, None]
    reach = np.abs(e) - tol[:, None]
    exceed = np.count_nonzero(boot >= e + reach, axis=1) + np.count_nonzero(boot <= e - reach, axis=1)
    n = boot.shape[1]
    exceed = np.where(reach[:, 0] <= 0, n, exceed)  # estimate ~0: every resample is as extreme
    return np.minimum((exceed + 1.0) / (n + 1.0), 1.0)


def bootstrap_pairs(
    batch: PairBatch,
    rows: np.ndarray,
    n_resamples: int,
    confidence: float,
    seed: int,
    system_resamples: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile CI (clipped to the range of the differences) and bootstrap p for each pair in ``rows``
    (all with 2+ shared items). ``system_resamples`` (n_systems, n_resamples) holds each system's
    resampled means over its own items (:func:`intervals.system_resamples`), used for same-item pairs."""
    d, shared = batch.d[rows], batch.shared[rows]
    estimate = d.sum(axis=1) / batch.n_shared[rows]
    tol = _REL_TOL * (np.abs(d).max(axis=1) + np.finfo(np.float64).tiny)
    low, high, p = np.empty(rows.size), np.empty(rows.size), np.empty(rows.size)
    for idx, boot in _pair_resamples(batch, rows, n_resamples, seed, system_resamples):
        low[idx], high[idx] = percentile_bounds(boot, confidence)
        p[idx] = _centred_p(boot, estimate[idx], tol[idx])
    dmin = np.where(shared, d, np.inf).min(axis=1)
    dmax = np.where(shared, d, -np.inf).max(axis=1)
    return np.clip(low, dmin, dmax), np.clip(high, dmin, dmax), p


def paired_bootstrap(
    a: Vector,
    b: Vector,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> PairedDifference:
    """Bootstrap the difference of means (a - b) over the items both runs scored.

    The resampling unit is the shared item, as in :func:`intervals.bootstrap_ci`: the CI is exactly the
    bootstrap interval of the vector of shared differences.
    """
    check_settings(n_resamples, confidence)
    batch = _single(a, b)
    n_shared = int(batch.n_shared[0])
    mean_a, mean_b, difference = (opt(m[0]) for m in batch.means())
    result = PairedDifference(
        n_shared, mean_a, mean_b, difference, None, None, None, int(n_resamples), float(confidence)
    )
    if reason := undefined_reason(n_shared):
        return dataclasses.replace(result, reason=reason)
    low, high, p = bootstrap_pairs(batch, np.arange(1), int(n_resamples), confidence, seed)
    return dataclasses.replace(result, ci_low=opt(low[0]), ci_high=opt(high[0]), p_value=opt(p[0]))


# --------------------------------------------------------------------------------------------------
# Sign-flip permutation test
# --------------------------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class _Flips:
    """Rows whose flipped sums |signs @ row| are counted against ``threshold``; with ``pairs = (pa, pb)``
    the rows are systems and the tested rows are their differences, via signs @ (x_a - x_b) =
    signs @ x_a - signs @ x_b (one product per system instead of one per pair)."""

    values: np.ndarray
    threshold: np.ndarray
    pairs: tuple[np.ndarray, np.ndarray] | None = None


def _add_hits(job: _Flips, signs: np.ndarray, count: np.ndarray) -> None:
    """Add to ``count`` the flips of one sign chunk whose |flipped sum| reaches each row's threshold.

    Rows go in blocks so one (block x flips) work matrix is alive at a time.
    """
    block = block_rows(signs.shape[0])
    per_system = None if job.pairs is None else job.values @ signs.T  # (n_systems, flips)
    for c0 in range(0, count.size, block):
        cols = slice(c0, c0 + block)
        if job.pairs is None or per_system is None:
            stat = job.values[cols] @ signs.T
        else:
            stat = per_system[job.pairs[0][cols]]
            np.subtract(stat, per_system[job.pairs[1][cols]], out=stat)
        np.abs(stat, out=stat)
        count[cols] += np.count_nonzero(stat >= job.threshold[cols, None], axis=1)


def _count_flips(jobs: Sequence[_Flips], n_items: int, n_permutations: int, seed: int) -> list[np.ndarray]:
    """How many sign flips reach each tested row's threshold; all jobs share one pass over the signs."""
    counts = [np.zeros(job.threshold.size) for job in jobs]
    for signs in sign_chunks(n_items, n_permutations, seed):
        for job, count in zip(jobs, counts, strict=True):
            if count.size:
                _add_hits(job, signs, count)
    return counts


def _monte_carlo_p(
    batch: PairBatch, rows: np.ndarray, n_permutations: int, seed: int, factor: bool
) -> np.ndarray:
    """Monte Carlo sign-flip p = (count + 1) / (n_permutations + 1) per pair.

    Signs are drawn per item position of the batch's matrix and shared by all pairs; with ``factor``,
    pairs whose systems scored the same items are tested through per-system flipped sums.
    """
    d = batch.d[rows]
    threshold = np.abs(d.sum(axis=1)) - _REL_TOL * np.abs(d).sum(axis=1)
    same = batch.same_items[rows] if factor else np.zeros(rows.size, dtype=bool)
    plain, fac = np.flatnonzero(~same), np.flatnonzero(same)
    xz = np.where(np.isnan(batch.x), 0.0, batch.x)
    pa, pb = batch.ia[rows[fac]], batch.ib[rows[fac]]
    mass = np.abs(xz).sum(axis=1)  # per-system sums round on the scale of the scores, not of d
    jobs = [
        _Flips(d[plain], threshold[plain]),
        _Flips(xz, threshold[fac] - 1e-12 * (mass[pa] + mass[pb]), (pa, pb)),
    ]
    count = np.empty(rows.size)
    count[plain], count[fac] = _count_flips(jobs, d.shape[1], n_permutations, seed)
    return (count + 1.0) / (n_permutations + 1.0)


def sign_flip_pairs(
    batch: PairBatch, rows: np.ndarray, n_permutations: int, seed: int, factor: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two-sided sign-flip p per pair in ``rows`` (all with 2+ shared items).

    Returns (p, exact flags, sign patterns used): exact enumeration up to ``EXACT_MAX_NONZERO`` non-zero
    differences, Monte Carlo above. Zeros are unaffected by flips, so each pair is a valid test on its
    own non-zero differences.
    """
    d = batch.d[rows]
    nonzero = (d != 0).sum(axis=1)
    exact = nonzero <= EXACT_MAX_NONZERO
    p = np.empty(rows.size)
    for c in np.flatnonzero(exact):
        p[c] = _exact_sign_flip_p(d[c][d[c] != 0])
    mc = np.flatnonzero(~exact)
    if mc.size:
        p[mc] = _monte_carlo_p(batch, rows[mc], n_permutations, seed, factor)
    used = np.where(exact, 2.0**nonzero, float(n_permutations))
    return p, exact, used


def paired_permutation_test(
    a: Vector, b: Vector, n_permutations: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> PairedTest:
    """Paired sign-flip test: under H0 each per-item difference is equally likely to have either sign.

    Two-sided on |sum of differences|. Exact over all 2^m patterns when m (non-zero differences) is
    at most 20; otherwise Monte Carlo with p = (count + 1) / (n_permutations + 1), which never
    reports 0 for a finite sample. All-zero differences (identical runs) give p = 1.
    """
    if int(n_permutations) < 1:
        raise ValueError("n_permutations must be at least 1")
    batch = _single(a, b)
    n_shared = int(batch.n_shared[0])
    d = batch.d[0]
    n_nonzero = int((d != 0).sum())
    _, _, difference = batch.means()
    result = PairedTest(
        "sign-flip", None, n_shared, n_nonzero, opt(difference[0]), float(d.sum()) if n_shared else None, None
    )
    if reason := undefined_reason(n_shared):
        return dataclasses.replace(result, reason=reason)
    p, exact, used = sign_flip_pairs(batch, np.arange(1), int(n_permutations), seed)
    return dataclasses.replace(
        result,
        p_value=float(p[0]),
        method="exact" if exact[0] else "monte-carlo",
        n_permutations=int(used[0]),
        reason="all differences are zero" if n_nonzero == 0 else None,
    )


# --------------------------------------------------------------------------------------------------
# McNemar
# --------------------------------------------------------------------------------------------------


def discordant_counts(batch: PairBatch) -> tuple[np.ndarray, np.ndarray]:
    """(b01, b10) per pair: a wrong & b right, a right & b wrong, on shared items."""
    xa, xb = batch.x[batch.ia], batch.x[batch.ib]
    b01 = ((xa == 0) & (xb == 1) & batch.shared).sum(axis=1)
    b10 = ((xa == 1) & (xb == 0) & batch.shared).sum(axis=1)
    return b01, b10


def mcnemar_from_counts(n_shared: int, b01: int, b10: int) -> PairedTest:
    """McNemar's test from the discordant counts of a pair with 2+ shared items.

    scipy is imported here, its only use: the scorers import this package, so Inspect's registry would
    otherwise load scipy.stats (about 0.7 s) for every eval."""
    from scipy import special
    from scipy import stats as sps

    n_disc = b01 + b10
    base = PairedTest(
        "mcnemar", "exact", n_shared, n_disc, (b10 - b01) / n_shared, None, None, b01=b01, b10=b10
    )
    if n_disc == 0:
        return dataclasses.replace(base, statistic=0.0, p_value=1.0, reason="no discordant pairs")
    if n_disc < MCNEMAR_EXACT_BELOW:
        p = sps.binomtest(b10, n_disc, 0.5, alternative="two-sided").pvalue
        return dataclasses.replace(base, statistic=float(min(b01, b10)), p_value=min(float(p), 1.0))
    stat = max(abs(b01 - b10) - 1, 0) ** 2 / n_disc
    # chdtrc(1, x) is chi2(1).sf(x) as a plain ufunc: all_pairs calls this once per pair.
    p_chi2 = float(special.chdtrc(1, stat))
    return dataclasses.replace(base, method="chi2-cc", statistic=float(stat), p_value=p_chi2)


def mcnemar(a: Vector, b: Vector) -> PairedTest:
    """McNemar test on paired 0/1 outcomes over shared items.

    Only discordant pairs carry information. Exact binomial (p = 1/2) below 25 discordant pairs,
    where the chi-square approximation is poor; chi-square with continuity correction otherwise.
    """
    batch = _single(a, b)
    check_binary(batch.x)
    n_shared = int(batch.n_shared[0])
    b01, b10 = (int(v[0]) for v in discordant_counts(batch))
    if reason := undefined_reason(n_shared):
        difference = (b10 - b01) / n_shared if n_shared else None
        return PairedTest(
            "mcnemar", None, n_shared, b01 + b10, difference, None, None, b01=b01, b10=b10, reason=reason
        )
    return mcnemar_from_counts(n_shared, b01, b10)
