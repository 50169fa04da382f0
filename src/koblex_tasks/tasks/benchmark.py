"""What a benchmark exposes to the rest of the package, in one value: the wiring point's unit.

A `Benchmark` holds the spec (its facts, from `koblex_tasks.benchmarks.<name>.spec`), its `@task` functions,
its solvers (discovered in its solver package), the re-derivation of each deterministic scorer, how its
released outputs are replayed, and how the scripted `koblexmock` model answers its prompts. `_registry`, the
CLI, the docs, the leaderboard, the grid and the tests iterate over `koblex_tasks.tasks.benchmarks()` and read
these fields: none of them names a benchmark.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

from koblex_tasks.solvers.discovery import discover_solvers
from koblex_tasks.spec import BenchmarkSpec

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.scorer import Score

# `rederive(sample, score, params) -> {value key: value or None (unscored)}`: a logged score recomputed from
# what the log recorded, with the scorer's own function (params: the scorer's arguments, as the spec allows).
Rederive = Callable[["EvalSample", "Score", Mapping[str, Any]], Mapping[str, float | None]]
# The answer a logged sample is scored by, cut out of its completion (the board checks it is a model's output).
Answer = Callable[["EvalSample"], str]
# The scripted model's reply to a prompt of this benchmark, None when the prompt is not one of its own.
MockReply = Callable[[str], str | None]


@dataclass(frozen=True)
class ReplayRequest:
    """`koblex replay` (and the grid's replays of released runs) as one value: what to replay and how."""

    file: str
    data: str | None = None
    grader: Any = None  # a judge model name (or Model), for judge-scored benchmarks
    rule: str = "paper"
    official: bool = False
    log_dir: str = "logs"
    method: str | None = None
    model_name: str | None = None
    verdicts: bool = False  # the file carries its own judge's verdicts (replayed without a judge)
    # what the judge reads (the spec's `judge_variant_args`, e.g. `{"judge_context": "none"}`): the released
    # answers are judged under the variant of the run they are compared with; {} the paper's
    judge_variant: Mapping[str, Any] = field(default_factory=dict)

    def options(self, *names: str, **renamed: str) -> dict[str, Any]:
        """The named fields as keyword arguments for a runner (`renamed`: runner argument -> field)."""
        return {**{n: getattr(self, n) for n in names}, **{k: getattr(self, v) for k, v in renamed.items()}}


@dataclass(frozen=True)
class Replayed:
    """A replay's outcome: its log, the lines to print, then the headline means (printed last, as JSON)."""

    log: EvalLog
    lines: list[str]
    headline: dict[str, float]


@dataclass(frozen=True)
class Replay:
    """How a benchmark's released outputs become scored eval logs."""

    run: Callable[[ReplayRequest], Replayed]
    # Does this released file (its first row) belong to the benchmark? `koblex replay` detects by it.
    owns: Callable[[Mapping[str, Any]], bool]
    # Does the file carry its own judge's verdicts (so it can be replayed with `--verdicts`, no judge)?
    has_verdicts: Callable[[Mapping[str, Any]], bool] = lambda _row: False


@dataclass(frozen=True)
class Benchmark:
    """One benchmark, wired: everything the package's generic parts need, declared by its own folder."""

    spec: BenchmarkSpec
    tasks: tuple[Callable[..., Task], ...] = ()
    solvers: tuple[Callable[..., Any], ...] = ()  # registered `@solver` factories, registry-named
    rederive: Mapping[str, Rederive] = field(default_factory=dict)  # scorer registry name -> re-derivation
    replay: Replay | None = None
    mock: MockReply | None = None
    # Solvers (registry names) that retrieve nothing: a task built with one loads no corpus.
    retrieval_free: frozenset[str] = frozenset()
    answer: Answer | None = None  # None: the completion as written

    @classmethod
    def wire(cls, spec: BenchmarkSpec, solver_package: ModuleType, **parts: Any) -> Benchmark:
        """A benchmark whose solvers are those its solver package defines (`solvers.discovery`)."""
        found = discover_solvers(solver_package.__name__)
        return cls(spec=spec, solvers=found.solvers, retrieval_free=found.retrieval_free, **parts)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rederive", MappingProxyType(dict(self.rederive)))
        scorers = {s.name for s in self.spec.scorers}
        unknown = set(self.rederive) - scorers
        if unknown:
            raise ValueError(f"{self.spec.name}: re-derivation for undeclared scorers {sorted(unknown)}")

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def solver_names(self) -> tuple[str, ...]:
        """The registry names of the solvers (`koblex_tasks/parser`)."""
        from koblex_tasks._inspect_compat import registry_name

        return tuple(n for n in (registry_name(s) for s in self.solvers) if n is not None)

    def task(self, name: str | None = None) -> Callable[..., Task]:
        """A task function by its short name (default: the spec's own task)."""
        wanted = (name or self.spec.task).split("/")[-1]
        for fn in self.tasks:
            if fn.__name__ == wanted:
                return fn
        raise LookupError(f"{self.spec.name} has no task {wanted!r}")


def first_match(items: Sequence[Benchmark], name: str) -> Benchmark | None:
    """The benchmark whose task registry name or short name is `name`."""
    return next((b for b in items if name in (b.spec.task, b.spec.name)), None)
