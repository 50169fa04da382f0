"""Wall times of a whole leaderboard board: 50 synthetic KoBLEX systems x 226 items, 10,000 resamples.

Run by hand: ``python bench/bench_leaderboard.py [--systems 50] [--resamples 10000]``. Synthetic runs are
stored through the real store (one transaction each), then the board statistics (every metric: bootstrap
CIs, per-hop strata, all pairs with Holm and letters, best set), the forest plot and the static site are
timed.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

from koblex_tasks.leaderboard.board import Settings, Site, compare_runs, compute_board
from koblex_tasks.leaderboard.plot import forest
from koblex_tasks.leaderboard.site import write_site
from koblex_tasks.leaderboard.store import Store
from koblex_tasks.leaderboard.submission import Submission

N_ITEMS = 226
BOARD_KEY = "koblex | lang=ko | dataset=bench | corpus=full | official scoring=False"  # placement's format
HOPS = [1] * 55 + [2] * 125 + [3] * 46
T = TypeVar("T")


def synthetic(k: int, quality: float, difficulty: np.ndarray, rng: np.random.Generator) -> Submission:
    ids = [f"q{i:03d}" for i in range(N_ITEMS)]
    f1 = np.clip(quality - difficulty + rng.normal(0, 0.2, N_ITEMS), 0, 1)
    em = (rng.uniform(size=N_ITEMS) < f1**2).astype(float)
    tok = np.clip(0.6 * quality + rng.normal(0, 0.15, N_ITEMS), 0, 1)
    scores = []
    for i, sid in enumerate(ids):
        p = r = float(f1[i])
        scores += [
            (sid, 1, "provision_precision", p),
            (sid, 1, "provision_recall", r),
            (sid, 1, "provision_f1", float(f1[i])),
            (sid, 1, "provision_em", float(em[i])),
            (sid, 1, "token_f1", float(tok[i])),
            (sid, 1, "empty_answer", 0.0),
        ]
    return Submission(
        log_path=f"synthetic-{k}.eval",
        eval_id=f"synthetic-{k}",
        content_hash=f"hash-{k}",
        task="koblex_tasks/koblex",
        benchmark="koblex",
        model=f"synthetic/model-{k:02d}",
        name=f"system {k:02d}",
        board_key=BOARD_KEY,
        board_label="bench board",
        dataset_fingerprint="bench",
        corpus_status="full",
        subset=False,
        created="2026-01-01T00:00:00+00:00",
        epochs=1,
        scores=scores,
        strata={sid: str(h) for sid, h in zip(ids, HOPS, strict=True)},
        provenance={"model": f"synthetic/model-{k:02d}"},
    )


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--systems", type=int, default=50)
    ap.add_argument("--resamples", type=int, default=10_000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    difficulty = rng.normal(0, 0.2, N_ITEMS)
    subs = [synthetic(k, q, difficulty, rng) for k, q in enumerate(rng.uniform(0.3, 0.8, args.systems))]
    settings = Settings(n_resamples=args.resamples)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.sqlite") as store:
        t, _ = timed(lambda: [store.add(s) for s in subs])
        rows.append((f"store {args.systems} submissions (1 transaction each)", t))
        t, board = timed(lambda: compute_board(store, BOARD_KEY, settings))
        n_pairs = args.systems * (args.systems - 1) // 2
        rows.append((f"board statistics (7 metrics, strata, {n_pairs} pairs x 3 columns)", t))
        runs = store.runs()
        t, _ = timed(lambda: compare_runs(store, [(runs[0], r) for r in runs[1:]], None, settings))
        rows.append((f"compare run 0 vs all ({len(runs) - 1} x 3 metrics, Holm)", t))
        site = Site(settings=settings, boards=(board,))
        t, fp = timed(lambda: forest(board))
        n_panels = sum(len(r.panels) for r in fp.rows)
        rows.append((f"forest plot geometry ({n_panels} panels x {args.systems} systems)", t))
        t, _index = timed(lambda: write_site(site, Path(tmp) / "site"))
        size = sum(p.stat().st_size for p in Path(tmp, "site").iterdir()) / 1e6
        rows.append((f"write site + exports ({size:.1f} MB)", t))
    width = max(len(r[0]) for r in rows)
    print(f"{args.systems} systems x {N_ITEMS} items, {args.resamples} resamples")
    print(f"{'operation'.ljust(width)}  seconds")
    print(f"{'-' * width}  -------")
    for label, seconds in rows:
        print(f"{label.ljust(width)}  {seconds:7.2f}")


if __name__ == "__main__":
    main()
