"""`koblex conformance FIXTURE_DIR --data Q.jsonl --corpus S.jsonl`: a live run's requests, call for call.

`koblex conformance --traces PATH... --data Q.jsonl --corpus S.jsonl`: the released prediction files' rows
replayed through our solvers with their defaults (`koblex_tasks.conformance.trace_replay`): per file
`<file>: <same>/<replayable> rows identical, <n> not replayable (<reason>)`, the first difference of each
differing row under it, then `traces: <k>/<K> files identical`; exit 1 when a replayable row differs.

For each `<method>_<backend>.jsonl` recording of the official scripts in FIXTURE_DIR, our solver runs through
Inspect on the same questions and corpus against a local responder server (`koblex_tasks.conformance`), and
its requests, results and retrieval lists are compared with the recording. One line per file; the first
difference under it; exit 1 on any difference, so CI catches the next deviation from the paper's protocol.
"""

from __future__ import annotations

from pathlib import Path

import click

from koblex_tasks.cli._base import EXIT_FAILED, EXIT_OK, CommandError, KoblexCommand, argument, reading

__all__ = ["conformance"]

_EXISTING_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.command(
    "conformance",
    cls=KoblexCommand,
    short_help="Check a live run's requests against the official scripts' calls.",
)
@argument(
    "fixture_dir",
    nargs=-1,
    type=click.Path(exists=True, path_type=Path),
    metavar="[FIXTURE_DIR]",
    help="Folder of recorded official requests (<method>_<backend>.jsonl and .retrieval.jsonl); with --traces,"
    " more released files or folders to replay (`--traces A B` reads both).",
)
@click.option(
    "--traces",
    "traces",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    metavar="PATH",
    help="Replay released prediction files (a file or a folder of <method>_<model>.jsonl); repeatable.",
)
@click.option(
    "--data", required=True, type=_EXISTING_FILE, help="The questions the fixtures were recorded on."
)
@click.option("--corpus", required=True, type=_EXISTING_FILE, help="The statute corpus they retrieved from.")
@click.option(
    "--only", multiple=True, metavar="NAME", help="Only these fixtures (e.g. parser_vllm); repeatable."
)
@click.option(
    "--parser-scripts",
    type=click.Choice(["auto", "original", "refactored"]),
    default="auto",
    show_default=True,
    help="Which ParSeR scripts the parser fixtures recorded: our ParSeR runs with that version's switches "
    "(auto: each version in turn; the report names the one compared).",
)
@click.option(
    "--log-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the Inspect logs of the runs here (default: Inspect's log directory).",
)
def conformance(
    fixture_dir: tuple[Path, ...],
    traces: tuple[Path, ...],
    data: Path,
    corpus: Path,
    only: tuple[str, ...],
    parser_scripts: str,
    log_dir: Path | None,
) -> int:
    """Run our solver for every fixture file against a local responder and compare with the official calls;
    or, with --traces, replay released prediction files row by row.

    Prints per file `calls identical N/M, results identical N/M, retrieval identical N/M` and the first
    difference (question, call, field, both values). Exit 1 on any difference. The fixtures record the
    released scripts, so the script behaviours the traces contradict are switched on for them (said first).
    """
    if traces:
        return _replay_traces([*traces, *fixture_dir], data, corpus, log_dir)
    if len(fixture_dir) != 1 or not fixture_dir[0].is_dir():
        raise CommandError("give one FIXTURE_DIR (a folder), or --traces PATH...")
    from koblex_tasks.conformance.run import (  # on use
        PARSER_SCRIPT_ARGS,
        SCRIPT_RUNS,
        Conformance,
        run_folder,
    )

    click.echo(f"the released scripts' behaviours on (the traces' defaults off): {SCRIPT_RUNS}")
    versions = (
        PARSER_SCRIPT_ARGS
        if parser_scripts == "auto"
        else {parser_scripts: PARSER_SCRIPT_ARGS[parser_scripts]}
    )
    setup = Conformance(data, corpus, log_dir, versions={"parser": versions})
    with reading("cannot read the fixtures"):
        reports = run_folder(fixture_dir[0], setup, list(only) or None)
    for report in reports:
        click.echo(report.summary())
    failed = [r.name for r in reports if not r.ok]
    click.echo(
        f"{len(reports) - len(failed)}/{len(reports)} files identical"
        + (f"; differ: {', '.join(failed)}" if failed else "")
    )
    return EXIT_FAILED if failed else EXIT_OK


def _replay_traces(paths: list[Path], data: Path, corpus: Path, log_dir: Path | None) -> int:
    from koblex_tasks.conformance.trace_replay import TraceSetup, run_traces  # Inspect: on use only
    from koblex_tasks.conformance.traces import read_trace_paths
    from koblex_tasks.data.koblex.dataset import load_koblex

    with reading("cannot read the released files"):
        files = read_trace_paths(paths, load_koblex(str(data)).records)
    results = run_traces(files, TraceSetup(data, corpus, log_dir))
    for result in results:
        click.echo(result.summary())
    same = sum(r.ok for r in results)
    click.echo(f"traces: {same}/{len(results)} files identical")
    return EXIT_OK if same == len(results) else EXIT_FAILED
