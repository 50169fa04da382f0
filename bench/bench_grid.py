"""How the wall time of a method grid falls with parallel tasks (`koblex grid ... --max-tasks N`).

Run by hand:

    python bench/bench_grid.py [--data ../shared/data] [--delay 0.5] [--limit 5] [--tasks 1 2 4 8]

The model is `slowmock/<name>`, registered here: koblexmock's scripted replies (`scripted_output`), each
after `await anyio.sleep(delay)`, like a server that answers every request in `delay` seconds whatever the
load (an idealised remote vLLM: the machine running the grid only waits). The grid is KoBLEX's Table 2
methods minus the three that need log-probabilities of a real model's shape (FLARE, ProbTree, BeamAggr), on
the shared data and partial corpus without reranker, `--limit` samples per run. Each setting runs in a fresh
log directory through the grid's own planning, task building and eval set (`koblex_tasks.grid`), so the
times include building the tasks (data, retriever) and writing the logs.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
from inspect_ai.log import EvalLog
from inspect_ai.model import modelapi
from inspect_ai.model._providers.mockllm import MockLLM

from koblex_tasks.providers.koblexmock import scripted_output

NEEDS_LOGPROBS = ("flare", "probtree", "beamaggr")
DELAY_ENV = "BENCH_GRID_DELAY"


@modelapi(name="slowmock")
class SlowMock(MockLLM):
    """koblexmock's scripted replies, each after a fixed delay ($BENCH_GRID_DELAY seconds)."""

    def __init__(self, *args: Any, **model_args: Any) -> None:
        model_args["custom_outputs"] = scripted_output
        super().__init__(*args, **model_args)
        self.delay = float(os.environ.get(DELAY_ENV, "0.5"))

    async def generate(self, *args: Any, **kwargs: Any) -> Any:
        await anyio.sleep(self.delay)
        return await super().generate(*args, **kwargs)


def run_seconds(log: EvalLog) -> float:
    """A run's own duration (its log's start to end)."""
    assert log.stats is not None
    started, completed = (datetime.fromisoformat(t) for t in (log.stats.started_at, log.stats.completed_at))
    return (completed - started).total_seconds()


def run_once(data: Path, max_tasks: int, limit: int, connections: int) -> tuple[float, float, list[float]]:
    """Seconds to build the grid's tasks, to run them (the eval set), and each run's own duration."""
    from koblex_tasks.benchmarks.koblex.methods import KOBLEX_GRID
    from koblex_tasks.benchmarks.koblex.spec import KOBLEX
    from koblex_tasks.grid.build import build_tasks
    from koblex_tasks.grid.plan import plan_grid
    from koblex_tasks.grid.run import run_grid

    task_args = {
        "data": str(data / "koblex" / "koblex.jsonl"),
        "corpus": str(data / "koblex" / "statutes.jsonl"),
        "reranker": "none",
    }
    methods = [m for m in KOBLEX_GRID.table_methods if m.key not in NEEDS_LOGPROBS]
    runs = plan_grid(KOBLEX_GRID, ["slowmock/m"], methods, task_args)
    with tempfile.TemporaryDirectory() as log_dir:
        start = time.perf_counter()
        tasks = build_tasks(KOBLEX, KOBLEX_GRID, runs, roles={})
        built = time.perf_counter()
        outcome = run_grid(
            KOBLEX,
            tasks,
            log_dir,
            limit=limit,
            max_tasks=max_tasks,
            display="none",
            max_connections=connections,
        )
        done = time.perf_counter()
    if outcome.failed:
        raise RuntimeError(f"{len(outcome.failed)} runs failed: {outcome.failed[0].error}")
    return built - start, done - built, [run_seconds(log) for log in outcome.logs]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=os.environ.get("KOBLEX_SHARED_DATA", "../shared/data"))
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per model call")
    parser.add_argument("--limit", type=int, default=5, help="samples per run")
    parser.add_argument("--connections", type=int, default=50, help="max_connections of the model")
    parser.add_argument("--tasks", type=int, nargs="+", default=[1, 2, 4, 8], help="--max-tasks settings")
    args = parser.parse_args()
    os.environ[DELAY_ENV] = str(args.delay)
    os.environ.setdefault("KOBLEX_CACHE_DIR", tempfile.mkdtemp(prefix="bench-grid-cache-"))
    data = Path(args.data)
    run_once(data, 8, 1, args.connections)  # warm-up: builds the BM25 index, imports everything
    print(
        f"{10 - len(NEEDS_LOGPROBS)} runs x {args.limit} samples, {args.delay} s per model call, max_connections {args.connections}"
    )
    print("| max tasks | build tasks (s) | eval set (s) | total (s) | eval speed-up vs first |")
    print("| --- | --- | --- | --- | --- |")
    base, runs = None, []
    for n in args.tasks:
        build, run, runs = run_once(data, n, args.limit, args.connections)
        base = base or run
        print(f"| {n} | {build:.1f} | {run:.1f} | {build + run:.1f} | {base / run:.2f}x |", flush=True)
    print(f"runs' own durations at the last setting: longest {max(runs):.1f} s, sum {sum(runs):.1f} s")


if __name__ == "__main__":
    main()
