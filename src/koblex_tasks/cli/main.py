"""`koblex`: the commands that are not `inspect eval`: replay, judge audit, leaderboard."""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version

import click

from koblex_tasks import __version__
from koblex_tasks.cli._base import EXIT_CODES_HELP, KoblexGroup, run
from koblex_tasks.cli.replay import detect_benchmark, replay

__all__ = ["PROG", "detect_benchmark", "koblex", "main"]

PROG = "koblex"


def _inspect_version() -> str:
    try:
        return version("inspect_ai")
    except PackageNotFoundError:
        return "not installed"


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """Both versions: a bug report needs the Inspect version as much as ours."""
    if value and not ctx.resilient_parsing:
        click.echo(f"koblex {__version__} (inspect-ai {_inspect_version()})")
        ctx.exit()


def _judge_audit() -> click.Command:
    from koblex_tasks.cli.audit import judge_audit

    return judge_audit


def _leaderboard() -> click.Command:
    from koblex_tasks.cli.leaderboard import leaderboard

    return leaderboard


def _grid() -> click.Command:
    from koblex_tasks.cli.grid import grid

    return grid


def _report() -> click.Command:
    from koblex_tasks.cli.report import report

    return report


def _conformance() -> click.Command:
    from koblex_tasks.cli.conformance import conformance

    return conformance


@click.group(
    cls=KoblexGroup,
    # the audit and leaderboard pull in the statistics stack: imported only when their command runs
    lazy={
        "judge-audit": (_judge_audit, "Agreement between issue labellers (human and LLM judge)."),
        "leaderboard": (_leaderboard, "Submit logs, build the site, compare runs."),
        "grid": (_grid, "Run the paper's method grid resumably; report it beside the paper's runs."),
        "report": (_report, "Analyses of finished logs (LEGIT error attribution, LF-Eval sensitivity)."),
        "conformance": (_conformance, "Check a live run's requests against the official scripts' calls."),
    },
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EXIT_CODES_HELP,
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the koblex-tasks and inspect-ai versions and exit.",
)
@click.option(
    "--debug",
    is_flag=True,
    envvar="KOBLEX_DEBUG",
    show_envvar=True,
    help="On an error, also print its traceback.",
)
def koblex(debug: bool) -> None:
    """The commands that are not `inspect eval`: replay released outputs, audit judges, run the leaderboard."""


koblex.add_command(replay)


def main(argv: list[str] | None = None) -> int:
    """`koblex ARGV` (default: the process arguments); returns the exit code instead of raising SystemExit."""
    return run(koblex, argv, PROG)


if __name__ == "__main__":
    sys.exit(main())
