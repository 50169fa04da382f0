"""Tasks, and the one wiring point: every benchmark the package knows, each as one `Benchmark` value.

Each benchmark's folder (`koblex/`, `legit/`) assembles its task(s) and exposes `BENCHMARK` (spec, tasks,
solvers, re-derivations, replay, mock replies). `BUILT_IN` lists them, one line each; a plugin adds its own
with `register_benchmark`. `_registry`, the CLI, the docs, the leaderboard, the grid and the tests iterate
over `benchmarks()` and name no benchmark.
"""

from __future__ import annotations

from koblex_tasks.spec import BenchmarkSpec
from koblex_tasks.tasks import koblex, legit
from koblex_tasks.tasks.benchmark import Benchmark, first_match

__all__ = [
    "BUILT_IN",
    "Benchmark",
    "benchmark_specs",
    "benchmarks",
    "find_benchmark",
    "register_benchmark",
    "spec_for_task",
    "unregister_benchmark",
]

BUILT_IN: tuple[Benchmark, ...] = (
    koblex.BENCHMARK,
    legit.BENCHMARK,
)

_REGISTERED: dict[str, Benchmark] = {}


def register_benchmark(benchmark: Benchmark) -> Benchmark:
    """Make a benchmark known to the leaderboard, replay, grid and CLI; registering the same one twice is a
    no-op, another one under a known task name is refused."""
    task = benchmark.spec.task
    known = first_match(benchmarks(), task)
    if known is not None and known != benchmark:
        raise ValueError(f"another benchmark is already registered for task {task!r}")
    if known is None:
        _REGISTERED[task] = benchmark
    return benchmark


def unregister_benchmark(task: str) -> None:
    """Forget a registered plugin benchmark (tests that add a toy benchmark clean up with this)."""
    _REGISTERED.pop(task, None)


def benchmarks() -> tuple[Benchmark, ...]:
    """Every benchmark: the built-in ones, then those registered, in registration order."""
    return BUILT_IN + tuple(_REGISTERED.values())


def find_benchmark(task: str) -> Benchmark | None:
    """The benchmark of a task registry name (`koblex_tasks/koblex`) or short name (`koblex`); None if unknown."""
    return first_match(benchmarks(), task)


def benchmark_specs() -> tuple[BenchmarkSpec, ...]:
    """Every benchmark's spec, in `benchmarks()` order."""
    return tuple(b.spec for b in benchmarks())


def spec_for_task(task: str) -> BenchmarkSpec | None:
    """The spec of a task registry name or short name; None if unknown."""
    found = find_benchmark(task)
    return found.spec if found is not None else None
