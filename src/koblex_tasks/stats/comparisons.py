"""Families of pairwise comparisons over a score matrix: all pairs, and the set indistinguishable from best.

Both run the paired engines of :mod:`koblex_tasks.stats.paired` on every pair at once and Holm-adjust
over the family they ran. Per-system resamples are drawn once and serve both the systems' intervals and
every pair of systems that scored the same items.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import numpy as np

from koblex_tasks.stats.inputs import (
    DEFAULT_ALPHA,
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Scores,
    as_matrix,
    check_alpha,
    check_binary,
    check_names,
    check_settings,
    opt,
)
from koblex_tasks.stats.intervals import Interval, intervals_from_resamples, system_resamples
from koblex_tasks.stats.letters import CompactLetterDisplay, compact_letters
from koblex_tasks.stats.multiplicity import family_permutations, holm_where_defined
from koblex_tasks.stats.paired import (
    PairBatch,
    bootstrap_pairs,
    discordant_counts,
    mcnemar_from_counts,
    sign_flip_pairs,
    undefined_reason,
)

MetricKind = Literal["continuous", "binary"]


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
class Pairwise:
    """Every pairwise comparison, Holm-adjusted over the comparisons that had a p-value.

    ``systems`` are the systems' intervals, equal to :func:`intervals.bootstrap_ci` with the same
    settings; ``letters`` is the compact letter display of the Holm-significant pairs.
    """

    metric_kind: MetricKind
    alpha: float
    confidence: float
    n_resamples: int
    n_permutations: int
    seed: int
    systems: tuple[Interval, ...]
    comparisons: tuple[PairComparison, ...]
    letters: CompactLetterDisplay


@dataclass(frozen=True)
class BestSet:
    """Systems not significantly different from the best-mean system (Holm over best-vs-others)."""

    best: str | None
    members: tuple[str, ...]
    comparisons: tuple[PairComparison, ...]
    alpha: float
    n_permutations: int
    reason: str | None = None


@dataclass(frozen=True)
class _Board:
    """A checked score matrix with its systems' resamples and intervals."""

    x: np.ndarray
    names: list[str]
    resamples: np.ndarray  # (n_systems, n_resamples); NaN rows for systems with < 2 scored items
    systems: tuple[Interval, ...]


def _board(
    matrix: Scores,
    names: Sequence[str],
    metric_kind: str,
    n_resamples: int,
    confidence: float,
    alpha: float,
    seed: int,
) -> _Board:
    check_settings(n_resamples, confidence)
    check_alpha(alpha)
    if metric_kind not in ("continuous", "binary"):
        raise ValueError(f"metric_kind must be 'continuous' or 'binary', got {metric_kind!r}")
    x = as_matrix(matrix)
    if x.size == 0 and len(names) == 0:
        x = np.zeros((0, 0))
    labels = check_names(names, x.shape[0])
    if metric_kind == "binary":
        check_binary(x)
    resamples = np.full((x.shape[0], int(n_resamples)), np.nan)
    filled = []
    for rows, means in system_resamples(x, int(n_resamples), seed):
        resamples[rows] = means
        filled.append(rows)
    systems = intervals_from_resamples(x, labels, ((r, resamples[r]) for r in filled), confidence)
    return _Board(x, labels, resamples, systems)


def _compare_pairs(
    board: _Board,
    pairs: list[tuple[int, int]],
    metric_kind: str,
    n_resamples: int,
    n_permutations: int,
    confidence: float,
    seed: int,
) -> list[PairComparison]:
    """Unadjusted comparisons of the given (a, b) index pairs, all at once.

    Results equal :func:`paired.paired_bootstrap` and :func:`paired.paired_permutation_test` /
    :func:`paired.mcnemar` on each pair (same draws; rounding aside).
    """
    if not pairs:
        return []
    batch = PairBatch.of(board.x, pairs)
    mean_a, mean_b, difference = batch.means()
    n_pairs = len(pairs)
    low, high, boot_p, p_value = (np.full(n_pairs, np.nan) for _ in range(4))
    ok = np.flatnonzero(batch.n_shared >= 2)
    low[ok], high[ok], boot_p[ok] = bootstrap_pairs(batch, ok, n_resamples, confidence, seed, board.resamples)
    tests: list[str | None] = [None] * n_pairs
    b01: list[int | None] = [None] * n_pairs
    b10: list[int | None] = [None] * n_pairs
    if metric_kind == "continuous":
        p_value[ok], exact, _ = sign_flip_pairs(batch, ok, n_permutations, seed, factor=True)
        for c, is_exact in zip(ok, exact, strict=True):
            tests[c] = "sign-flip-exact" if is_exact else "sign-flip-monte-carlo"
    else:
        d01, d10 = discordant_counts(batch)
        b01, b10 = [int(v) for v in d01], [int(v) for v in d10]
        for c in ok:
            res = mcnemar_from_counts(int(batch.n_shared[c]), int(d01[c]), int(d10[c]))
            p_value[c], tests[c] = res.p_value, f"mcnemar-{res.method}"
    return [
        PairComparison(
            system_a=board.names[i],
            system_b=board.names[j],
            n_shared=int(batch.n_shared[c]),
            mean_a=opt(mean_a[c]),
            mean_b=opt(mean_b[c]),
            difference=opt(difference[c]),
            ci_low=opt(low[c]),
            ci_high=opt(high[c]),
            bootstrap_p=opt(boot_p[c]),
            test=tests[c],
            p_value=opt(p_value[c]),
            p_adjusted=None,
            significant=False,
            b01=b01[c],
            b10=b10[c],
            reason=undefined_reason(int(batch.n_shared[c])),
        )
        for c, (i, j) in enumerate(pairs)
    ]


@dataclass(frozen=True)
class _Family:
    """How one family of comparisons is computed: the settings every comparison function takes."""

    metric_kind: MetricKind
    n_resamples: int
    confidence: float
    alpha: float
    seed: int
    higher_is_better: bool
    n_permutations: int | None

    def board_args(self) -> tuple[MetricKind, int, float, float, int]:
        return self.metric_kind, self.n_resamples, self.confidence, self.alpha, self.seed

    def compare(self, board: _Board, pairs: list[tuple[int, int]]) -> tuple[tuple[PairComparison, ...], int]:
        """The pairs compared and Holm-adjusted as one family, and the permutations each test used."""
        n_perm = self.n_permutations
        if n_perm is None:
            n_perm = family_permutations(len(pairs), self.alpha, self.n_resamples)
        compared = _compare_pairs(
            board, pairs, self.metric_kind, int(self.n_resamples), int(n_perm), self.confidence, self.seed
        )
        return _holm(compared, self.alpha), int(n_perm)


def _holm(comparisons: list[PairComparison], alpha: float) -> tuple[PairComparison, ...]:
    """Holm over the comparisons that have a p-value; undefined ones stay unadjusted and not significant."""
    decisions = holm_where_defined([c.p_value for c in comparisons], alpha)
    return tuple(
        c if d is None else dataclasses.replace(c, p_adjusted=d[0], significant=d[1])
        for c, d in zip(comparisons, decisions, strict=True)
    )


def all_pairs(
    matrix: Scores,
    names: Sequence[str],
    metric_kind: MetricKind = "continuous",
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    alpha: float = DEFAULT_ALPHA,
    seed: int = DEFAULT_SEED,
    higher_is_better: bool = True,
    n_permutations: int | None = None,
) -> Pairwise:
    """Compare every pair of systems on their shared items, Holm-adjusted over all comparisons made.

    ``matrix`` is (n_systems, n_items), NaN = unscored. Continuous metrics (F1 etc.) use the paired
    sign-flip test; binary metrics (exact match) use McNemar. Both get a paired bootstrap CI of the
    difference. ``n_permutations`` defaults to :func:`multiplicity.family_permutations` for the number
    of pairs. The compact letter display uses the Holm-significant pairs.
    """
    family = _Family(metric_kind, n_resamples, confidence, alpha, seed, higher_is_better, n_permutations)
    return _all_pairs(_board(matrix, names, *family.board_args()), family)


def _all_pairs(board: _Board, family: _Family) -> Pairwise:
    comps, n_perm = family.compare(board, list(combinations(range(board.x.shape[0]), 2)))
    scored = [(s.name, s.mean) for s in board.systems if s.name is not None and s.mean is not None]
    letters = compact_letters(
        [name for name, _ in scored],
        [mean for _, mean in scored],
        [(c.system_a, c.system_b) for c in comps if c.significant],
        higher_is_better=family.higher_is_better,
    )
    return Pairwise(
        metric_kind=family.metric_kind,
        alpha=float(family.alpha),
        confidence=float(family.confidence),
        n_resamples=int(family.n_resamples),
        n_permutations=n_perm,
        seed=int(family.seed),
        systems=board.systems,
        comparisons=comps,
        letters=letters,
    )


def indistinguishable_from_best(
    matrix: Scores,
    names: Sequence[str],
    metric_kind: MetricKind = "continuous",
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    alpha: float = DEFAULT_ALPHA,
    seed: int = DEFAULT_SEED,
    higher_is_better: bool = True,
    n_permutations: int | None = None,
) -> BestSet:
    """Systems whose difference from the best-mean system is not significant after Holm.

    The family is the best-vs-other comparisons only (fewer tests than all pairs, so more power).
    A system with scored items but too few shared items to test cannot be shown worse and is kept;
    systems with no scored items are left out. Members are ordered best first.
    """
    family = _Family(metric_kind, n_resamples, confidence, alpha, seed, higher_is_better, n_permutations)
    return _best_set(_board(matrix, names, *family.board_args()), family)


def _best_set(board: _Board, family: _Family) -> BestSet:
    means = np.array([np.nan if s.mean is None else s.mean for s in board.systems])
    scored = np.flatnonzero(~np.isnan(means))
    if scored.size == 0:
        reason = "no systems" if not board.names else "no system has scored items"
        return BestSet(None, (), (), float(family.alpha), 0, reason)
    sign = 1.0 if family.higher_is_better else -1.0
    best = int(scored[np.argmax(sign * means[scored])])
    others = [s for s in range(len(board.names)) if s != best]
    comps, n_perm = family.compare(board, [(best, s) for s in others])
    has_items = set(scored.tolist())
    keep = [best] + [s for s, c in zip(others, comps, strict=True) if not c.significant and s in has_items]
    keep.sort(key=lambda s: (-sign * means[s], s))
    return BestSet(board.names[best], tuple(board.names[s] for s in keep), comps, float(family.alpha), n_perm)


def column_significance(
    matrix: Scores,
    names: Sequence[str],
    metric_kind: MetricKind = "continuous",
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    alpha: float = DEFAULT_ALPHA,
    seed: int = DEFAULT_SEED,
    higher_is_better: bool = True,
) -> tuple[Pairwise, BestSet]:
    """:func:`all_pairs` and :func:`indistinguishable_from_best` of one column, equal to calling both, from
    one draw of the systems' resamples (a leaderboard column needs both; ``Pairwise.systems`` are its
    intervals)."""
    family = _Family(metric_kind, n_resamples, confidence, alpha, seed, higher_is_better, None)
    board = _board(matrix, names, *family.board_args())
    return _all_pairs(board, family), _best_set(board, family)
