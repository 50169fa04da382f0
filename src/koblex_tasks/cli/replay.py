"""`koblex replay FILE` / `koblex replay --verdicts FILE`: released outputs as a scored Inspect eval log.

Each benchmark's replay is its `Benchmark.replay` (the wiring point); this module only picks the benchmark
whose file format the file has, checks that a judge-scored benchmark has a judge (a released verdict file
brings its own), and prints the headline (its last stdout line is one JSON
object, for scripts).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from koblex_tasks.cli._base import KoblexCommand, RunFailed, argument, echo_json
from koblex_tasks.errors import DataError
from koblex_tasks.hub import HubUnavailableError

if TYPE_CHECKING:  # the benchmarks load on first use: `koblex --help` and the other commands need none
    from koblex_tasks.tasks import Benchmark
    from koblex_tasks.tasks.benchmark import Replayed, ReplayRequest

__all__ = ["detect_benchmark", "replay"]


def _first_row(file: str) -> dict[str, Any]:
    from koblex_tasks.jsonl import read_jsonl

    for _, first in read_jsonl(file):
        return first
    raise DataError(file, None, "the file is empty")


def released_file(file: str) -> str:
    """A path as given, or a released file's bare name (`parser_gpt4o.jsonl`): the copy cached at its pinned
    commit, downloaded once (so a user elsewhere needs no clone of the paper's repository)."""
    from koblex_tasks.grid.released import ReleasedFiles, ReleasedUnavailable

    if Path(file).exists() or Path(file).name != file:
        return file
    for benchmark in replayable():
        grid = benchmark.spec.methods
        if grid is None or grid.released is None:
            continue
        try:
            files = ReleasedFiles(grid.released, grid=grid, hint="pass the file's path instead")
            found = files.named(file)
        except ReleasedUnavailable as exc:
            raise RunFailed(str(exc)) from exc
        if found is not None:
            return str(found)
    return file


def replayable() -> list[Benchmark]:
    from koblex_tasks.tasks import benchmarks

    return [b for b in benchmarks() if b.replay is not None]


def detect_benchmark(file: str) -> str:
    """The benchmark whose released-file format the file's first row has."""
    first = _first_row(file)
    for benchmark in replayable():
        if benchmark.replay is not None and benchmark.replay.owns(first):
            return benchmark.name
    known = ", ".join(b.name for b in replayable())
    raise DataError(file, 1, f"not a released file of any benchmark ({known}): pass --benchmark")


class ReplayableBenchmark(click.ParamType):
    """A registered benchmark with a replay; the choices are read when shown, so plugins registered later
    are among them."""

    name = "benchmark"

    def get_metavar(self, *args: Any, **kwargs: Any) -> str:
        return "[" + "|".join(b.name for b in replayable()) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from koblex_tasks.tasks import find_benchmark

        found = find_benchmark(str(value))
        if found is None or found.replay is None:
            known = ", ".join(b.name for b in replayable())
            self.fail(f"{value!r}: not a benchmark with a replay (known: {known})", param, ctx)
        return found.name


REPLAY_HUB_HINT = "pass a local questions JSONL instead (--data PATH)"


@click.command(cls=KoblexCommand)
@argument(
    "file",
    help="released prediction file (a path, or a released file's name such as parser_gpt4o.jsonl: downloaded "
    "once at the paper's pinned commit), LEGIT responses file, or with --verdicts a LEGIT evaluator file",
)
@click.option(
    "--verdicts",
    is_flag=True,
    help="LEGIT: FILE is a released evaluator file (reasoning_tasks_<generator>_evaluator_<judge>.jsonl); "
    "grade its responses with its own verdicts, no judge called",
)
@click.option(
    "--benchmark",
    type=ReplayableBenchmark(),
    default=None,
    help="which benchmark the file belongs to (default: detected from its first line)",
)
@click.option("--data", default=None, help="local questions JSONL (default: the published dataset)")
@click.option(
    "--grader",
    default=None,
    help="the judge model, e.g. openai/gpt-4o: KoBLEX adds LF-Eval on the released answers; LEGIT responses "
    "need it (required there)",
)
@click.option(
    "--rule", type=click.Choice(["paper", "official"]), default="paper", help="LEGIT only: scoring rule"
)
@click.option(
    "--official",
    is_flag=True,
    help="score exactly like the paper's evaluation script (LEGIT: the script's arithmetic, bugs included)",
)
@click.option("--log-dir", default="logs", help="where the eval log is written (default: ./logs)")
@click.option("--method", default=None, help="method name to record (default: inferred from file name)")
@click.option("--model-name", default=None, help="model name to record (default: inferred from file name)")
@click.option(
    "-T",
    "task_args",
    multiple=True,
    metavar="NAME=VALUE",
    help="a judge variant, as the task takes it (KoBLEX: -T judge_context=none|retrieved, -T "
    "judge_reference=false): the judge grades the released answers under it (needs --grader)",
)
def replay(
    file: str,
    verdicts: bool,
    benchmark: str | None,
    data: str | None,
    grader: str | None,
    rule: str,
    official: bool,
    log_dir: str,
    method: str | None,
    model_name: str | None,
    task_args: tuple[str, ...],
) -> None:
    """Turn a released prediction file into a scored Inspect eval log.

    The last line printed is the headline means as one JSON object, for scripts.
    """
    from koblex_tasks.tasks import find_benchmark
    from koblex_tasks.tasks.benchmark import ReplayRequest

    file = released_file(file)
    name = benchmark or detect_benchmark(file)
    found = find_benchmark(name)
    if found is None or found.replay is None:  # pragma: no cover - detection only returns replayable ones
        raise click.UsageError(f"no replay for benchmark {name!r}")
    if verdicts:
        if grader is not None or not found.replay.has_verdicts(_first_row(file)):
            raise click.UsageError(
                "--verdicts replays a released evaluator file with its own judge's verdicts: no --grader"
            )
    elif grader is None and found.spec.needs_judge:
        has_verdicts = found.replay.has_verdicts(_first_row(file))
        hint = ", or --verdicts to grade it with its own released verdicts" if has_verdicts else ""
        raise click.UsageError(
            f"{found.spec.title} answers can only be scored by a judge: pass --grader <model>{hint}"
        )
    variant = _judge_variant(found, task_args)
    request = ReplayRequest(
        file, data, grader, rule, official, log_dir, method, model_name, verdicts, variant
    )
    _run(found.replay.run, request)


def _judge_variant(found: Benchmark, task_args: tuple[str, ...]) -> dict[str, Any]:
    """`-T` pairs parsed as `inspect eval` parses them; each must be one of the benchmark's judge variant
    arguments (a released file's answers are fixed: nothing else of the task applies), with a judge to read it."""
    from koblex_tasks.cli.grid import parse_pairs

    variant = parse_pairs(task_args, "-T")
    allowed = found.spec.judge_variant_args
    for name in found.spec.unknown_judge_variant_args(variant):
        takes = f"takes only {', '.join(allowed)}" if allowed else "takes none"
        raise click.UsageError(
            f"-T {name}: a replay of {found.spec.title} answers {takes} (the judge's variant)"
        )
    return variant


def _run(runner: Callable[[ReplayRequest], Replayed], request: ReplayRequest) -> None:
    """Run a replay and print its lines, then the headline as the last line (one JSON object)."""
    try:
        replayed = runner(request)
    except HubUnavailableError as exc:  # told with this command's flag, not the task's `-T data=`
        raise RunFailed(str(exc.with_hint(REPLAY_HUB_HINT))) from exc
    except RuntimeError as exc:  # the runners' "did not finish": the input was read, its eval failed
        raise RunFailed(str(exc)) from exc
    for line in replayed.lines:
        click.echo(line)
    echo_json(replayed.headline)
