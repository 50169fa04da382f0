"""The one statistics engine, used by the log metric, the leaderboard and the judge audit.

One engine so that the same scores, resamples and seed give the same numbers everywhere. By concern:

- ``inputs``: score-matrix conventions (NaN = unscored, None + reason for undefined), checks, defaults.
- ``resampling``: THE source of resamples: seeded item-count chunks (bootstrap; also the audit's
  cluster weights), sign-flip chunks, resampled means of each row over its own items, quantiles.
- ``intervals``: a system's mean and percentile-bootstrap interval (:class:`Interval`), over all items,
  per stratum, and :func:`mean_interval` for one run (the log metric).
- ``paired``: two runs on their shared items: paired bootstrap of the difference, sign-flip permutation
  test, McNemar, and the batch engines behind them.
- ``multiplicity``: Holm's adjustment and the sign flips a family of tests needs.
- ``letters``: compact letter display.
- ``comparisons``: all pairs of a score matrix, and the systems indistinguishable from the best.
"""

from koblex_tasks.stats.comparisons import (
    BestSet,
    MetricKind,
    PairComparison,
    Pairwise,
    all_pairs,
    column_significance,
    indistinguishable_from_best,
)
from koblex_tasks.stats.inputs import (
    DEFAULT_ALPHA,
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Settings,
)
from koblex_tasks.stats.intervals import (
    Interval,
    Intervals,
    Label,
    StratifiedIntervals,
    bootstrap_ci,
    mean_interval,
    split_by_stratum,
    stratified_bootstrap_ci,
)
from koblex_tasks.stats.letters import CompactLetterDisplay, LetterEntry, compact_letters
from koblex_tasks.stats.multiplicity import (
    HolmAdjustment,
    family_permutations,
    holm_bonferroni,
    holm_where_defined,
)
from koblex_tasks.stats.paired import (
    EXACT_MAX_NONZERO,
    MCNEMAR_EXACT_BELOW,
    PairedDifference,
    PairedTest,
    mcnemar,
    paired_bootstrap,
    paired_permutation_test,
)
from koblex_tasks.stats.resampling import count_chunks, sign_chunks

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "EXACT_MAX_NONZERO",
    "MCNEMAR_EXACT_BELOW",
    "BestSet",
    "CompactLetterDisplay",
    "HolmAdjustment",
    "Interval",
    "Intervals",
    "Label",
    "LetterEntry",
    "MetricKind",
    "PairComparison",
    "PairedDifference",
    "PairedTest",
    "Pairwise",
    "Settings",
    "StratifiedIntervals",
    "all_pairs",
    "bootstrap_ci",
    "column_significance",
    "compact_letters",
    "count_chunks",
    "family_permutations",
    "holm_bonferroni",
    "holm_where_defined",
    "indistinguishable_from_best",
    "mcnemar",
    "mean_interval",
    "paired_bootstrap",
    "paired_permutation_test",
    "sign_chunks",
    "split_by_stratum",
    "stratified_bootstrap_ci",
]
