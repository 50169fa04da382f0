"""Wall times of the statistics engine (``koblex_tasks.stats``) at KoBLEX scale: 50 systems x 226 items,
10,000 resamples.

Run by hand: ``python bench/bench_stats.py``. Prints one row per operation with the best of a few
runs and the peak traced numpy/Python memory of one run.
"""

from __future__ import annotations

import math
import time
import tracemalloc
from collections.abc import Callable
from itertools import combinations

import numpy as np

from koblex_tasks import stats as st

N_SYSTEMS, N_ITEMS, N_RESAMPLES = 50, 226, 10_000


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Continuous scores in [0, 1], 0/1 outcomes and a 5%-missing copy, with a spread of system quality."""
    rng = np.random.default_rng(seed)
    quality = rng.uniform(0.3, 0.8, N_SYSTEMS)
    difficulty = rng.normal(0.0, 0.2, N_ITEMS)
    continuous = np.clip(quality[:, None] - difficulty + rng.normal(0, 0.2, (N_SYSTEMS, N_ITEMS)), 0, 1)
    binary = (rng.uniform(size=(N_SYSTEMS, N_ITEMS)) < continuous).astype(float)
    missing = continuous.copy()
    missing[rng.uniform(size=missing.shape) < 0.05] = np.nan
    return continuous, binary, missing, [f"run{i:02d}" for i in range(N_SYSTEMS)]


def _few_missing(continuous: np.ndarray, seed: int = 1) -> np.ndarray:
    """The usual case: a handful of runs lost a couple of items each (API errors)."""
    rng = np.random.default_rng(seed)
    out = continuous.copy()
    for run in rng.choice(N_SYSTEMS, size=5, replace=False):
        out[run, rng.choice(N_ITEMS, size=2, replace=False)] = np.nan
    return out


def _measure(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(best wall seconds over repeats, peak MB traced during one run)."""
    fn()  # warm up BLAS threads and caches
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak / 2**20


def main() -> None:
    continuous, binary, missing, names = _data()
    few_missing = _few_missing(continuous)
    strata = np.resize([1, 2, 3], N_ITEMS)
    n_pairs = N_SYSTEMS * (N_SYSTEMS - 1) // 2
    family = st.family_permutations(n_pairs, 0.05)
    pairs = list(combinations(range(N_SYSTEMS), 2))[:25]

    def looped_permutations() -> None:
        for i, j in pairs:
            st.paired_permutation_test(continuous[i], continuous[j], n_permutations=N_RESAMPLES)

    rows: list[tuple[str, Callable[[], object], int, float]] = [
        ("bootstrap_ci 50 systems", lambda: st.bootstrap_ci(continuous, N_RESAMPLES), 3, 1.0),
        ("bootstrap_ci 50 systems, 5 runs miss 2", lambda: st.bootstrap_ci(few_missing, N_RESAMPLES), 3, 1.0),
        ("bootstrap_ci 50 systems, 5% NaN", lambda: st.bootstrap_ci(missing, N_RESAMPLES), 3, 1.0),
        ("stratified_bootstrap_ci 3 strata", lambda: st.stratified_bootstrap_ci(continuous, strata), 3, 1.0),
        (
            "all_pairs 1225, 10k flips",
            lambda: st.all_pairs(continuous, names, n_permutations=N_RESAMPLES),
            2,
            1.0,
        ),
        (f"all_pairs 1225, default {family} flips", lambda: st.all_pairs(continuous, names), 2, 1.0),
        ("all_pairs 1225, 5 runs miss 2 items", lambda: st.all_pairs(few_missing, names), 2, 1.0),
        ("all_pairs 1225, 5% NaN everywhere", lambda: st.all_pairs(missing, names), 2, 1.0),
        ("all_pairs 1225, binary (McNemar)", lambda: st.all_pairs(binary, names, "binary"), 2, 1.0),
        ("indistinguishable_from_best 49", lambda: st.indistinguishable_from_best(continuous, names), 3, 1.0),
        ("looped paired_permutation_test x1225", looped_permutations, 1, n_pairs / len(pairs)),
    ]
    print(f"{N_SYSTEMS} systems x {N_ITEMS} items, {N_RESAMPLES} resamples (best wall time)")
    print(f"{'operation':<42} {'seconds':>9} {'peak MB':>9}")
    for label, fn, repeats, scale in rows:
        seconds, peak = _measure(fn, repeats)
        note = f"  (extrapolated from {len(pairs)} pairs)" if scale != 1.0 else ""
        print(f"{label:<42} {seconds * scale:>9.3f} {peak:>9.1f}{note}")
    floor = n_pairs / (N_RESAMPLES + 1)
    print(f"Holm floor with 10k flips over {n_pairs} pairs: {floor:.3f} (> 0.05: nothing can be significant)")
    result = st.all_pairs(continuous, names)
    n_sig = sum(c.significant for c in result.comparisons)
    print(f"default all_pairs: {n_sig}/{n_pairs} pairs significant after Holm")


if __name__ == "__main__":
    main()
