"""``koblex report``: analyses read from finished logs (today: LEGIT's error attribution, the paper's Fig. 7)."""

from __future__ import annotations

from pathlib import Path

import click

from koblex_tasks.cli._base import KoblexCommand, KoblexGroup, argument, echo_json, reading

__all__ = ["legit_errors", "report"]


@click.group("report", cls=KoblexGroup, short_help="Analyses of finished logs (LEGIT error attribution).")
def report() -> None:
    """Analyses of finished eval logs."""


@report.command(
    "legit-errors",
    cls=KoblexCommand,
    short_help="Parent-issue correctness by the children's state (deduction vs decomposition errors).",
)
@argument(
    "logs", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="LOG...", help="LEGIT logs"
)
@click.option("--json", "as_json", is_flag=True, help="print one JSON object instead of Markdown")
def legit_errors(logs: tuple[Path, ...], as_json: bool) -> None:
    """How often a parent issue is concluded right when all its children are covered and right, when a child
    is covered but wrong (deduction error), when a child is missing (decomposition error), or both; by depth
    and by difficulty, from the verdicts each LOG's rubric score records. Several LOGs are reported one by one.
    """
    from koblex_tasks.audit.legit.errors import attribute, format_markdown, trees_from_log

    tables = []
    for log in logs:
        with reading(f"cannot read verdicts from {log}"):
            tables.append((log, attribute(trees_from_log(log))))
    if as_json:
        echo_json({"error_attribution": [{"log": str(log), **t.to_dict()} for log, t in tables]})
        return
    click.echo("\n\n".join(format_markdown(t, f"LEGIT error attribution: {log.name}") for log, t in tables))
