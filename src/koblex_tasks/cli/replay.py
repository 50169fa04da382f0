"""`koblex replay FILE` / `koblex replay --verdicts FILE`: released outputs as a scored Inspect eval log.

The runners live in `koblex_tasks.replay`; this module only picks one, checks that a judge-scored benchmark
has a judge (a released verdict file brings its own), and prints the headline (its last stdout line is one JSON
object, for scripts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from koblex_tasks.cli._base import KoblexCommand, RunFailed, argument, echo_json
from koblex_tasks.errors import DataError
from koblex_tasks.hub import HubUnavailableError
from koblex_tasks.spec import BenchmarkSpec
from koblex_tasks.tasks import benchmark_specs, spec_for_task

__all__ = ["detect_benchmark", "replay"]


@dataclass(frozen=True)
class ReplayArgs:
    """The command line of `koblex replay`, as one value for the runners."""

    file: str
    data: str | None
    grader: str | None
    rule: str
    official: bool
    log_dir: str
    method: str | None
    model_name: str | None

    def common(self) -> dict[str, Any]:
        """The arguments every runner takes, under the same names."""
        return {"file": self.file, "data": self.data, "log_dir": self.log_dir, "model_name": self.model_name}


@dataclass(frozen=True)
class Replayed:
    """What a runner reports: the lines to print, then the headline means (printed last, as JSON)."""

    lines: list[str]
    headline: dict[str, float]


def detect_benchmark(file: str) -> str:
    """LEGIT response files have `doc_id`/`response`; KoBLEX prediction files have `question`/`answers`."""
    from koblex_tasks.jsonl import read_jsonl

    for _, first in read_jsonl(file):
        return "legit" if "doc_id" in first and "response" in first else "koblex"
    raise DataError(file, None, "the file is empty")


def _replay_koblex(args: ReplayArgs, spec: BenchmarkSpec) -> Replayed:
    from koblex_tasks.replay.koblex import run_replay

    result = run_replay(**args.common(), official=args.official, method=args.method, grader=args.grader)
    summary = f"method: {result.method}  model: {result.model}  log: {result.log.location}"
    # on the spec's display scale (x100 for F1 and EM, LF-Eval is already 0-100)
    table = [f"  {name:<14} {spec.value(name).scale * value:6.2f}" for name, value in result.headline.items()]
    return Replayed([summary, result.alignment_line, *table], result.headline)


def _replay_legit(args: ReplayArgs, spec: BenchmarkSpec) -> Replayed:
    from koblex_tasks.replay.legit import run_legit_replay
    from koblex_tasks.replay.run import headline_means

    log = run_legit_replay(**args.common(), grader=args.grader, rule=args.rule, official_script=args.official)
    generator = (log.eval.metadata or {}).get("generator")
    summary = f"benchmark: {spec.name}  generator: {generator}  log: {log.location}"
    return Replayed([summary], headline_means(log, spec))


def _replay_verdicts(args: ReplayArgs, spec: BenchmarkSpec) -> Replayed:
    """A released LEGIT evaluator file: its own verdicts grade its responses (no judge is called)."""
    from koblex_tasks.replay.legit import run_verdict_replay

    result = run_verdict_replay(**args.common(), rule=args.rule, official_script=args.official)
    summary = (
        f"benchmark: {spec.name}  generator: {result.generator}  judge: {result.judge}  "
        f"log: {result.log.location}"
    )
    return Replayed([summary, *result.lines()], result.headline)


# The one place that knows which runner replays which benchmark (they take different arguments).
RUNNERS: dict[str, Callable[[ReplayArgs, BenchmarkSpec], Replayed]] = {
    "koblex": _replay_koblex,
    "legit": _replay_legit,
}


def _has_verdicts(file: str) -> bool:
    """Does the file's first row carry judge verdicts (a LEGIT evaluator file)?"""
    from koblex_tasks.jsonl import read_jsonl

    _, first = next(iter(read_jsonl(file)), (0, {}))
    return "evaluation_result" in first


REPLAY_HUB_HINT = "pass a local questions JSONL instead (--data PATH)"


@click.command(cls=KoblexCommand)
@argument(
    "file",
    help="released prediction file (parser_gpt4o.jsonl), LEGIT responses file, or with --verdicts a LEGIT "
    "evaluator file",
)
@click.option(
    "--verdicts",
    is_flag=True,
    help="LEGIT: FILE is a released evaluator file (reasoning_tasks_<generator>_evaluator_<judge>.jsonl); "
    "grade its responses with its own verdicts, no judge called",
)
@click.option(
    "--benchmark",
    type=click.Choice([s.name for s in benchmark_specs()]),
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
) -> None:
    """Turn a released prediction file into a scored Inspect eval log.

    The last line printed is the headline means as one JSON object, for scripts.
    """
    args = ReplayArgs(file, data, grader, rule, official, log_dir, method, model_name)
    if verdicts:
        if benchmark not in (None, "legit") or grader is not None:
            raise click.UsageError(
                "--verdicts replays a LEGIT evaluator file with its own judge: no --grader"
            )
        _run(_replay_verdicts, args, spec_for_task("legit"))
        return
    name = benchmark or detect_benchmark(args.file)
    spec = spec_for_task(name)
    runner = RUNNERS.get(name)
    if spec is None or runner is None:
        raise click.UsageError(f"no replay runner for benchmark {name!r} (have {sorted(RUNNERS)})")
    if args.grader is None and spec.needs_judge:
        hint = ", or --verdicts to grade it with its own released verdicts" if _has_verdicts(file) else ""
        raise click.UsageError(
            f"{spec.title} answers can only be scored by a judge: pass --grader <model>{hint}"
        )
    _run(runner, args, spec)


def _run(
    runner: Callable[[ReplayArgs, BenchmarkSpec], Replayed], args: ReplayArgs, spec: BenchmarkSpec | None
) -> None:
    """Run a runner and print its lines, then the headline as the last line (one JSON object)."""
    if spec is None:  # pragma: no cover - the built-in specs are always registered
        raise click.UsageError("the LEGIT benchmark is not registered")
    try:
        replayed = runner(args, spec)
    except HubUnavailableError as exc:  # told with this command's flag, not the task's `-T data=`
        raise RunFailed(str(exc.with_hint(REPLAY_HUB_HINT))) from exc
    except RuntimeError as exc:  # the runners' "did not finish": the input was read, its eval failed
        raise RunFailed(str(exc)) from exc
    for line in replayed.lines:
        click.echo(line)
    echo_json(replayed.headline)
