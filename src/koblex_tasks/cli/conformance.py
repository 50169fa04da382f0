"""`koblex conformance FIXTURE_DIR --data Q.jsonl --corpus S.jsonl`: a live run's requests, call for call.

For each `<method>_<backend>.jsonl` recording of the official scripts in FIXTURE_DIR, our solver runs through
Inspect on the same questions and corpus against a local responder server (`koblex_tasks.conformance`), and
its requests, results and retrieval lists are compared with the recording. One line per file; the first
difference under it; exit 1 on any difference, so CI catches the next deviation from the paper's protocol.
"""

from __future__ import annotations

from pathlib import Path

import click

from koblex_tasks.cli._base import EXIT_FAILED, EXIT_OK, KoblexCommand, argument, reading

__all__ = ["conformance"]

_EXISTING_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.command(
    "conformance",
    cls=KoblexCommand,
    short_help="Check a live run's requests against the official scripts' calls.",
)
@argument(
    "fixture_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Folder of recorded official requests (<method>_<backend>.jsonl and .retrieval.jsonl).",
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
    type=click.Choice(["original", "refactored"]),
    default="original",
    show_default=True,
    help="Which ParSeR scripts the parser fixtures recorded: our ParSeR runs with that version's switches.",
)
@click.option(
    "--log-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the Inspect logs of the runs here (default: Inspect's log directory).",
)
def conformance(
    fixture_dir: Path,
    data: Path,
    corpus: Path,
    only: tuple[str, ...],
    parser_scripts: str,
    log_dir: Path | None,
) -> int:
    """Run our solver for every fixture file against a local responder and compare with the official calls.

    Prints per file `calls identical N/M, results identical N/M, retrieval identical N/M` and the first
    difference (question, call, field, both values). Exit 1 on any difference.
    """
    from koblex_tasks.conformance.run import PARSER_SCRIPT_ARGS, Conformance, run_folder  # on use only

    setup = Conformance(data, corpus, log_dir, {"parser": PARSER_SCRIPT_ARGS[parser_scripts]})
    with reading("cannot read the fixtures"):
        reports = run_folder(fixture_dir, setup, list(only) or None)
    for report in reports:
        click.echo(report.summary())
    failed = [r.name for r in reports if not r.ok]
    click.echo(
        f"{len(reports) - len(failed)}/{len(reports)} files identical"
        + (f"; differ: {', '.join(failed)}" if failed else "")
    )
    return EXIT_FAILED if failed else EXIT_OK
