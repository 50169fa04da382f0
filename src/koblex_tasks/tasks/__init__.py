"""Tasks: one folder per benchmark (`koblex/`, `legit/`), each holding the benchmark's declarations and its task.

- `spec.py`: the benchmark's spec (task name and version, scorers and value keys, ranges, strata, headline,
  paper protocol, dataset fingerprints): plain data that every layer may read.
- `dataset.py` and the other data modules: loading and validating the questions and released files.
- `task.py`: the `@task` that assembles dataset, default solver (the paper's protocol) and scorers; the only
  module here that imports solvers and scorers.

Importing this package registers the built-in specs; `benchmark_specs()` lists every registered one.
"""

from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.benchmarks.legit.spec import LEGIT
from koblex_tasks.spec import BenchmarkSpec, find_spec, registered_specs

__all__ = ["KOBLEX", "LEGIT", "benchmark_specs", "spec_for_task"]


def benchmark_specs() -> tuple[BenchmarkSpec, ...]:
    """Every registered benchmark spec: the built-in KoBLEX and LEGIT first, then any registered later."""
    return registered_specs()


def spec_for_task(task: str) -> BenchmarkSpec | None:
    """The spec of a task registry name (`koblex_tasks/koblex`) or short name (`koblex`); None if unknown."""
    return find_spec(task)
