"""``koblex report``: analyses read from finished logs (today: LEGIT's error attribution, the paper's Fig. 7)."""

from __future__ import annotations

from pathlib import Path

import click

from koblex_tasks.cli._base import KoblexCommand, KoblexGroup, argument, echo_json, reading

__all__ = ["legit_errors", "lf_eval_sensitivity", "report"]


@click.group(
    "report",
    cls=KoblexGroup,
    short_help="Analyses of finished logs (LEGIT error attribution, LF-Eval sensitivity).",
)
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


@report.command(
    "lf-eval-sensitivity",
    cls=KoblexCommand,
    short_help="LF-Eval per method under each judge variant, paired differences, rank correlations.",
)
@argument(
    "logs",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path),
    metavar="LOG...",
    help="KoBLEX logs with LF-Eval, or directories of them (e.g. grids' log directories)",
)
@click.option(
    "--resamples", type=click.IntRange(min=100), default=None, help="bootstrap resamples (default 10000)"
)
@click.option("--seed", type=int, default=None, help="bootstrap seed (default the leaderboard's)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object instead of Markdown")
def lf_eval_sensitivity(
    logs: tuple[Path, ...], resamples: int | None, seed: int | None, as_json: bool
) -> None:
    """LF-Eval of the same methods scored under different judge variants (`-T judge_context=gold|none|retrieved`,
    `-T judge_reference=true|false`): per method, the mean under each variant with its bootstrap interval, the
    paired difference of each variant from the paper's (gold context, reference shown) on the items both logs
    scored (bootstrap CI, sign-flip test, Holm over the report), and Kendall's tau and Spearman's rho of the
    methods' means between every two variants. LF-Eval is re-derived from each log's judge records, never read
    from its totals. A directory stands for its finished logs (the latest of each model, method and variant),
    replays of released runs (`koblex grid ... --judge-released`) included. A log without LF-Eval, logs of
    different datasets, or a single variant: one line, exit 2.
    """
    import dataclasses

    from koblex_tasks.grid.compare import Settings
    from koblex_tasks.grid.sensitivity import format_markdown, sensitivity_report

    settings = Settings()
    if resamples is not None:
        settings = dataclasses.replace(settings, n_resamples=resamples)
    if seed is not None:
        settings = dataclasses.replace(settings, seed=seed)
    with reading("cannot read a log"):
        for log in logs:
            if not log.exists():
                raise FileNotFoundError(f"no such log or directory: {log}")
    result = sensitivity_report(list(logs), settings)
    if as_json:
        echo_json({"lf_eval_sensitivity": result.to_dict()})
        return
    click.echo(format_markdown(result), nl=False)
