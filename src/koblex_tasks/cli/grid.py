"""`koblex grid <benchmark>` and `koblex grid report DIR`: the paper's method grid in one resumable command.

`koblex grid koblex --model M [--model M2 ...]` runs every method of the benchmark's table (or `--methods`)
for each model through one Inspect eval set: re-running the same command finishes only what is missing, tasks
run in parallel up to `--max-tasks`, each run is an ordinary log. At the end, and with `koblex grid report
DIR` from any log directory, it prints the paper-style table with the paper's released run beside each row
and a paired verdict, and writes it as Markdown and HTML. Options mirror `inspect eval` (`-T`, `-M`,
`--model-role`, `--limit`, `--max-connections`, `--max-tasks`); `-S METHOD.NAME=VALUE` sets one method's
solver argument.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import yaml  # type: ignore[import-untyped]  # Inspect's dependency, without stubs here

from koblex_tasks._inspect_compat import parse_cli_args
from koblex_tasks.cli._base import (
    EXIT_FAILED,
    EXIT_OK,
    CommandError,
    KoblexCommand,
    KoblexGroup,
    argument,
    reading,
)
from koblex_tasks.grid.plan import grid_for, plan_grid, select_methods, solver_overrides
from koblex_tasks.spec import BenchmarkSpec, MethodGrid
from koblex_tasks.tasks import benchmark_specs

if TYPE_CHECKING:
    from koblex_tasks.grid.logs import RunRecord

__all__ = ["grid", "parse_pairs"]

DISPLAYS = ("full", "rich", "plain", "log", "none")
Handler = Callable[..., int | None]


def _yaml_pairs(pairs: Sequence[str]) -> dict[str, Any]:
    """The fallback parser: YAML values, `a,b` is a list (what Inspect does)."""

    out: dict[str, Any] = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        value = yaml.safe_load(raw)
        if isinstance(value, str) and "," in value:
            value = value.split(",")
        out[key.replace("-", "_")] = value
    return out


def parse_pairs(pairs: Sequence[str], option: str) -> dict[str, Any]:
    """`NAME=VALUE` pairs parsed exactly as `inspect eval -T` parses them.

    Inspect's parser is private (`_inspect_compat.parse_cli_args`): it is used when present, with an
    equivalent YAML fallback.
    """
    bad = [p for p in pairs if "=" not in p or not p.partition("=")[0]]
    if bad:
        raise click.UsageError(f"{option} {bad[0]!r}: expected NAME=VALUE")
    parsed = parse_cli_args(tuple(pairs))
    return _yaml_pairs(pairs) if parsed is None else parsed


def model_roles(pairs: Sequence[str]) -> dict[str, str | list[str]]:
    roles = parse_pairs(pairs, "--model-role")
    for role, value in roles.items():
        ok = isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))
        if not ok:
            raise click.UsageError(f"--model-role {role}=...: give a model name, e.g. {role}=openai/gpt-4o")
    return roles


def split_names(values: Sequence[str]) -> list[str]:
    """`--model a,b --model c` -> [a, b, c] (Inspect accepts comma-separated models too)."""
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def pairs(flag: str, dest: str, metavar: str, help: str) -> Callable[[Handler], Handler]:
    """A repeatable `NAME=VALUE` option, as `inspect eval -T`."""
    return click.option(flag, dest, multiple=True, metavar=metavar, help=help)


def count(flag: str, help: str, default: int | None = None, low: int = 1) -> Callable[[Handler], Handler]:
    """A whole-number option (`--limit`, `--max-tasks`, ...)."""
    return click.option(
        flag, type=click.IntRange(min=low), default=default, show_default=default is not None, help=help
    )


def with_options(handler: Handler, options: list[Callable[[Handler], Handler]]) -> Handler:
    return functools.reduce(lambda f, option: option(f), reversed(options), handler)


def report_options(handler: Handler) -> Handler:
    """The options every command that prints a report takes."""
    return with_options(
        handler,
        [
            click.option(
                "--released",
                metavar="DIR",
                help="folder with the paper's released files (default: download once from the pinned commit)",
            ),
            click.option("--no-released", is_flag=True, help="do not compare with the paper's released runs"),
            click.option(
                "--judge-released",
                metavar="MODEL",
                help="also judge the released answers with MODEL (your judge) under your runs' judge variant "
                "(-T judge_context=...), so judge-graded metrics compare too; one judge call per released answer",
            ),
            click.option(
                "--out", metavar="DIR", help="where grid-<benchmark>.md and .html go (default: the log dir)"
            ),
            click.option("--submit", metavar="DB", help="also store the runs in this leaderboard database"),
            click.option(
                "--alpha",
                type=click.FloatRange(0, 1, min_open=True, max_open=True),
                default=0.05,
                show_default=True,
                help="significance level after Holm",
            ),
            count("--resamples", "bootstrap resamples and sign flips", 10_000),
            click.option(
                "--seed", type=int, default=0, show_default=True, help="seed of resamples and sign flips"
            ),
        ],
    )


def run_options(handler: Handler) -> Handler:
    """The options of a grid run (as in `inspect eval` where both have them)."""
    return with_options(
        handler,
        [
            click.option(
                "--model",
                "models",
                multiple=True,
                required=True,
                help="model to evaluate (repeat, or comma-separate, for several)",
            ),
            click.option(
                "--methods",
                multiple=True,
                help="comma-separated methods (default: every method of the paper's table)",
            ),
            pairs("--model-role", "roles", "ROLE=MODEL", "model role, e.g. grader=openai/gpt-4o"),
            pairs("-T", "task_args", "NAME=VALUE", "task argument for every run"),
            pairs(
                "-S",
                "solver_args",
                "METHOD.NAME=VALUE",
                "one method's solver argument, e.g. -S flare.threshold=-0.5",
            ),
            pairs("-M", "model_args", "NAME=VALUE", "model argument for every model"),
            count("--limit", "only the first N samples of each run"),
            click.option("--log-dir", help="the grid's log directory (default: logs/grid-<benchmark>)"),
            count("--max-tasks", "runs in parallel (Inspect's default: max(models, 10))"),
            count("--max-connections", "concurrent requests per model"),
            count("--max-samples", "concurrent samples per run"),
            click.option(
                "--generate-config",
                metavar="FILE",
                help="YAML/JSON generate options for every model, as `inspect eval --generate-config`",
            ),
            count(
                "--retry-attempts", "task retries within this command (re-running it also resumes)", 0, low=0
            ),
            click.option("--display", type=click.Choice(DISPLAYS), help="Inspect's display"),
            click.option("--dry-run", is_flag=True, help="print the runs and their arguments, run nothing"),
            click.option(
                "--table",
                metavar="N",
                help="run one of the paper's other tables instead (KoBLEX: 3 ablation, 4 retriever, 5 k, 6 l), "
                "each row paired with the full method",
            ),
        ],
    )


def generate_config(path: str | None) -> dict[str, Any]:
    """The generate options of `--generate-config FILE` (validated by Inspect's `GenerateConfig`)."""
    if path is None:
        return {}
    from inspect_ai.model import GenerateConfig

    with reading(f"--generate-config {path}"):
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        if not isinstance(raw, dict):
            raise ValueError("expected a mapping of generate options")
        GenerateConfig.model_validate(raw)
    return raw


def _set(opts: dict[str, Any], *names: str) -> dict[str, Any]:
    """The named options the user gave (their Inspect defaults apply otherwise)."""
    return {name: opts[name] for name in names if opts[name] is not None}


def _check_judge(spec: BenchmarkSpec, roles: dict[str, Any], task_args: dict[str, Any]) -> None:
    """A benchmark that cannot be scored without a judge, or a judge variant with no judge to read it,
    refuses before any task is built."""
    if spec.judge_role in roles:
        return
    if spec.needs_judge:
        raise CommandError(
            f"{spec.title} can only be scored by a judge: pass --model-role {spec.judge_role}=<model>"
        )
    variant = " ".join(f"-T {k}={v}" for k, v in spec.judge_variant(task_args).items())
    if variant:
        raise CommandError(
            f"{variant} sets what the judge reads, but no judge is bound: pass --model-role {spec.judge_role}=<model>"
        )


def _report(
    spec: BenchmarkSpec,
    method_grid: MethodGrid | None,
    records: Sequence[RunRecord],
    log_dir: str,
    opts: dict[str, Any],
    models: Sequence[str] = (),
) -> int:
    """Print the report of `records`, write its files, submit if asked; returns 1 when a submission failed."""
    from koblex_tasks.grid.compare import Settings
    from koblex_tasks.grid.page import html_page
    from koblex_tasks.grid.released import ReleasedFiles
    from koblex_tasks.grid.render import console, markdown, print_report
    from koblex_tasks.grid.report import build_report

    files = None
    if method_grid is not None and method_grid.released is not None and not opts["no_released"]:
        local = Path(opts["released"]) if opts["released"] else None
        if local is not None and not local.is_dir():
            raise CommandError(f"--released {local}: not a directory")
        files = ReleasedFiles(method_grid.released, local)
    settings = Settings(n_resamples=opts["resamples"], seed=opts["seed"], alpha=opts["alpha"])
    report = build_report(
        spec, method_grid, list(records), log_dir, files, settings, opts["judge_released"], models
    )
    print_report(report, console())
    if files is not None and files.offline:
        click.echo(f"warning: {files.offline}", err=True)
    out = Path(opts["out"] or log_dir)
    out.mkdir(parents=True, exist_ok=True)
    md, html = out / f"grid-{spec.name}.md", out / f"grid-{spec.name}.html"
    md.write_text(markdown(report), encoding="utf-8")
    html.write_text(html_page(report), encoding="utf-8")
    click.echo(f"wrote {md} and {html}")
    if opts["submit"]:
        from koblex_tasks.grid.submit import submit_logs

        submitted = submit_logs(opts["submit"], [r.record.path for r in report.rows])
        for line in submitted.lines:
            click.echo(line)
        if submitted.rejected:
            return EXIT_FAILED
    return EXIT_OK


def default_log_dir(spec: BenchmarkSpec, table: str | None, task_args: dict[str, Any]) -> str:
    """`logs/grid-koblex`, `-table3` for one of the paper's other tables, and the judge variant when it is
    not the paper's (`-judge_context-none`): each variant's runs resume and report apart from the others."""
    suffix = f"-table{table}" if table is not None else ""
    suffix += "".join(f"-{k}-{v}" for k, v in spec.judge_variant(task_args).items())
    return str(Path("logs") / f"grid-{spec.name}{suffix}")


def _run(spec: BenchmarkSpec, method_grid: MethodGrid, opts: dict[str, Any]) -> int:
    from koblex_tasks.grid.build import build_tasks, check_solvers
    from koblex_tasks.grid.logs import log_path, read_records
    from koblex_tasks.grid.progress import summary_line
    from koblex_tasks.grid.run import run_grid

    if opts["table"] is not None:
        method_grid = method_grid.for_table(opts["table"])
    models = split_names(opts["models"])
    methods = select_methods(method_grid, split_names(opts["methods"]))
    roles = model_roles(opts["roles"])
    model_args = parse_pairs(opts["model_args"], "-M")
    generate = {**generate_config(opts["generate_config"]), **_set(opts, "max_connections", "max_samples")}
    overrides = solver_overrides(method_grid, parse_pairs(opts["solver_args"], "-S"))
    task_args = parse_pairs(opts["task_args"], "-T")
    runs = plan_grid(method_grid, models, methods, task_args, overrides)
    for model in models:
        if not any(r.family for r in runs if r.model == model) and method_grid.families:
            known = ", ".join(f.label for f in method_grid.families)
            click.echo(
                f"note: {model} is not a model family of the paper ({known}): solver defaults, no released run"
            )
    check_solvers(runs)
    if opts["dry_run"]:
        for run in runs:
            click.echo(run.describe())
        return EXIT_OK
    _check_judge(spec, roles, task_args)
    log_dir = opts["log_dir"] or default_log_dir(spec, opts["table"], task_args)
    tasks = build_tasks(spec, method_grid, runs, roles)
    outcome = run_grid(
        spec,
        tasks,
        log_dir,
        model_roles=roles,
        limit=opts["limit"],
        max_tasks=opts["max_tasks"],
        retry_attempts=opts["retry_attempts"],
        display=opts["display"],
        model_args=model_args,
        **generate,
    )
    for log in outcome.reused:
        click.echo(f"reused: {summary_line(log, spec)}")
    records = read_records(log_path(log.location) for log in outcome.logs)
    code = _report(spec, method_grid, records, log_dir, opts, models)
    if outcome.failed:
        click.echo(
            f"{len(outcome.failed)} of {len(outcome.logs)} runs did not finish: re-run the same command to "
            "resume them (finished runs are kept)",
            err=True,
        )
        return EXIT_FAILED
    return code


def benchmark_command(spec: BenchmarkSpec, method_grid: MethodGrid) -> click.Command:
    """`koblex grid <benchmark>` for one benchmark with a declared grid."""
    methods = ", ".join(m.key for m in method_grid.methods)

    @click.command(
        spec.name,
        cls=KoblexCommand,
        short_help=f"Run {method_grid.table} for each --model, resumably; report beside the paper.",
        help=f"Run {method_grid.table} (methods: {methods}) for each --model through one resumable "
        "Inspect eval set, then print the table beside the paper's released runs.",
    )
    @run_options
    @report_options
    def command(**opts: Any) -> int:
        from koblex_tasks.grid.quiet import said_once

        with said_once():
            return _run(spec, method_grid, opts)

    return command


@click.group(
    cls=KoblexGroup, short_help="Run the paper's method grid resumably; report it beside the paper's runs."
)
def grid() -> None:
    """Run a benchmark's method grid (`koblex grid koblex --model ...`) or report a log directory."""


for _spec in benchmark_specs():
    _grid = grid_for(_spec)
    if _grid is not None:
        grid.add_command(benchmark_command(_spec, _grid))


@grid.command("report", cls=KoblexCommand)
@argument("log_dir", metavar="DIR", help="a log directory (e.g. a grid's --log-dir)")
@report_options
def report(log_dir: str, **opts: Any) -> int:
    """The paper-style table of the logs in DIR, beside the paper's released runs."""
    from koblex_tasks.grid.logs import log_locations, read_records
    from koblex_tasks.grid.report import own_runs

    if not Path(log_dir).is_dir():
        raise CommandError(f"{log_dir}: not a directory")
    paths = log_locations(log_dir)
    records = read_records(paths)
    from koblex_tasks.grid.quiet import said_once

    code = EXIT_OK
    reported = 0
    for spec in benchmark_specs():
        if own_runs(records, spec):
            reported += 1
            with said_once():
                code = max(code, _report(spec, grid_for(spec), records, log_dir, opts))
    if not reported:
        raise CommandError(f"{log_dir}: no eval log of a benchmark task ({len(paths)} logs found)")
    return code
