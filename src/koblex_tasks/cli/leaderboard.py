"""`koblex leaderboard`: submit eval logs, build the static site, compare two runs on the terminal.

Everything printed that came from a log or the store (names, models, labels, reasons) goes through
`leaderboard.text.printable`: control and bidi characters are shown as escapes, never sent to the terminal.
"""

from __future__ import annotations

import functools
import sqlite3
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from koblex_tasks.cli._base import EXIT_FAILED, EXIT_OK, CommandError, KoblexGroup, argument, echo_json, run
from koblex_tasks.cli.main import PROG, koblex
from koblex_tasks.leaderboard.store import ENV_DB, Store, default_db_path
from koblex_tasks.logs.archive import ENV_MAX_MEMBER, ENV_MAX_TOTAL
from koblex_tasks.text import fmt, printable

if TYPE_CHECKING:
    from koblex_tasks.leaderboard.board import Settings

__all__ = ["format_comparison", "format_family", "leaderboard", "leaderboard_main"]

Handler = Callable[..., int | None]
NEEDS_DB = {"build", "compare", "list_runs", "remove"}  # a misspelt --db must not become an empty board


def say(text: str, err: bool = False) -> None:
    """Print text that may hold a log's strings: controls and bidi controls escaped, line breaks kept."""
    click.echo(printable(text, keep_newlines=True), err=err)


def with_store(handler: Handler) -> Handler:
    """Add `--db` and open the store around the command, so that a failing command still closes it."""

    @functools.wraps(handler)
    def wrapper(db: str | None, **kwargs: Any) -> int | None:
        path = Path(db) if db else default_db_path()
        if handler.__name__ in NEEDS_DB and not path.exists():
            raise CommandError(
                f"no leaderboard database at {path}: submit a run first (`{PROG} leaderboard submit LOG`)"
            )
        try:
            store = Store(path)
        except sqlite3.DatabaseError as exc:  # a corrupt file, or not a database at all
            raise CommandError(f"{path}: not a readable leaderboard database ({exc})") from exc
        except RuntimeError as exc:  # another schema version: the message names both
            raise CommandError(str(exc)) from exc
        try:
            with store:
                return handler(store, **kwargs)
        except sqlite3.DatabaseError as exc:  # corrupt or truncated past its first pages: found when read
            raise CommandError(f"{path}: not a readable leaderboard database ({exc})") from exc

    return click.option(
        "--db", default=None, help=f"leaderboard database (default: ${ENV_DB} or the user data dir)"
    )(wrapper)


def with_settings(handler: Handler) -> Handler:
    """Add the statistics options of `build` and `compare` and hand the command one `Settings`."""

    @functools.wraps(handler)
    def wrapper(*args: Any, resamples: int, seed: int, alpha: float, **kwargs: Any) -> int | None:
        from koblex_tasks.leaderboard.board import Settings

        return handler(*args, settings=Settings(n_resamples=resamples, seed=seed, alpha=alpha), **kwargs)

    options = [
        click.option(
            "--resamples",
            type=click.IntRange(min=1),
            default=10_000,
            help="bootstrap resamples (default 10000)",
        ),
        click.option(
            "--seed", type=int, default=0, help="random seed of resamples and sign flips (default 0)"
        ),
        click.option(
            "--alpha",
            type=click.FloatRange(0, 1, min_open=True, max_open=True),
            default=0.05,
            help="significance level after Holm (default 0.05)",
        ),
    ]
    return functools.reduce(lambda f, option: option(f), reversed(options), wrapper)


@click.group(
    cls=KoblexGroup,
    short_help="Submit logs, build the site, compare runs.",
)
def leaderboard() -> None:
    """Submit eval logs, build the static site, compare two runs on the terminal."""


def _as_dict(result: Any) -> dict[str, Any]:
    """A result of `koblex_tasks.leaderboard.board` as its plain dict (a dict, or an object with `to_dict()`)."""
    return result.to_dict() if hasattr(result, "to_dict") else dict(result)


def _attach(store: Store, path: str, judge_model: str | None) -> None:
    from koblex_tasks.leaderboard.audit import load_audit

    report, summaries = load_audit(path, judge_model)
    for model, summary in summaries.items():
        store.attach_audit(model, {**summary, "source": str(path)}, report)
        alpha = summary["alpha"]
        say(f"attached judge audit for {model}: alpha vs lawyers {'–' if alpha is None else f'{alpha:.3f}'}")


@leaderboard.command()
@argument("logs", nargs=-1, required=True, metavar="LOG...", help=".eval or .json Inspect eval log(s)")
@click.option(
    "--name",
    default=None,
    help="display name, at most 200 characters (default: '<model> · <method or solver>', cut to 200)",
)
@click.option(
    "--allow-subset", is_flag=True, help="store a subset run (--limit, hops=...) on a separate board"
)
@click.option("--audit", default=None, metavar="JSON", help="also attach a `koblex judge-audit --json` file")
@click.option("--dry-run", is_flag=True, help="validate only, store nothing")
@click.option(
    "--max-member-mib",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help=f"largest inflated .eval member read (default 64; ${ENV_MAX_MEMBER})",
)
@click.option(
    "--max-total-mib",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help=f"largest inflated .eval or .json log read (default 512; ${ENV_MAX_TOTAL})",
)
@with_store
def submit(
    store: Store,
    logs: tuple[str, ...],
    name: str | None,
    allow_subset: bool,
    audit: str | None,
    dry_run: bool,
    max_member_mib: float | None,
    max_total_mib: float | None,
) -> int:
    """Validate Inspect eval logs and store them (one transaction each).

    Every stored score is re-derived from the log by its scorer's own code; a log whose scores disagree is
    refused. One refused or unreadable log is reported and the others still go in (exit 1 if any failed).
    """
    from koblex_tasks.leaderboard.submission import run_name_problem
    from koblex_tasks.logs.reading import ReadLimits

    if name is not None and len(logs) > 1:
        raise click.UsageError("--name needs exactly one LOG")
    if name is not None and (why := run_name_problem(name)):
        raise click.BadParameter(printable(why), param_hint="--name")
    limits = ReadLimits.from_env(max_member_mib, max_total_mib)
    failed = sum(not _submit_one(store, log, name, allow_subset, limits, dry_run) for log in logs)
    if audit:
        _attach(store, audit, None)
    return EXIT_FAILED if failed else EXIT_OK


def _submit_one(
    store: Store, log: str, name: str | None, allow_subset: bool, limits: Any, dry_run: bool
) -> bool:
    """Validate and store one log, reporting the outcome; False when it was not stored (or not valid)."""
    from koblex_tasks.leaderboard.submission import SubmissionRejected, load_submission

    ctx = click.get_current_context()
    try:
        sub = load_submission(log, name=name, allow_subset=allow_subset, limits=limits)
        for warning in sub.warnings:
            say(f"{ctx.command_path}: {log}: warning: {warning}", err=True)
        if dry_run:
            say(f"valid: {log} -> '{sub.name}' on board '{sub.board_label}' (not stored: --dry-run)")
            return True
        run_id = store.add(sub)
    except SubmissionRejected as exc:  # reported, and the other logs still go in
        say(f"{ctx.command_path}: {exc}", err=True)
        return False
    except Exception as exc:  # a bug or an unexpected input: named, and the batch goes on
        if ctx.find_root().params.get("debug"):
            traceback.print_exception(exc)
        say(f"{ctx.command_path}: {log}: not submitted: {type(exc).__name__}: {exc}", err=True)
        return False
    say(f"stored run #{run_id} '{sub.name}' ({len(sub.strata)} items) on board '{sub.board_label}'")
    return True


@leaderboard.command()
@click.option("--out", required=True, help="output directory")
@with_settings
@with_store
def build(store: Store, out: str, settings: Settings) -> None:
    """Write the static site (index.html) and JSON/CSV/Markdown exports."""
    from koblex_tasks.leaderboard.board import compute_all
    from koblex_tasks.leaderboard.site import write_site

    if not out.strip():
        raise click.BadParameter(
            "an empty folder name (it would write into the current directory)", param_hint="--out"
        )

    if why := store.unearned_run():
        raise CommandError(why)
    site = compute_all(store, settings)
    index = write_site(site, out)
    n_runs = sum(len(b.runs) for b in site.boards)
    click.echo(f"wrote {index} ({len(site.boards)} boards, {n_runs} runs) and JSON/CSV/Markdown exports")


def format_comparison(result: dict[str, Any]) -> str:
    """An aligned table of one pair's comparisons, with the settings and the Holm family size on top."""
    lines = []
    rows = result["comparisons"]
    if not rows:
        return "no metric in common"
    a, b = rows[0]["a"], rows[0]["b"]
    lines.append(f"A = #{rows[0]['a_id']} {a}")
    lines.append(f"B = #{rows[0]['b_id']} {b}")
    s = result["settings"]
    lines.append(
        f"paired on shared items; {s['n_resamples']} resamples, seed {s['seed']}; Holm over "
        f"{result['family_size']} comparisons at alpha {s['alpha']}"
    )
    header = ["metric", "n", "A", "B", "A-B", "95% CI", "test", "p", "p(Holm)", "sig"]
    table = [header]
    for r in rows:
        sc = r["scale"]
        table.append(
            [
                r["label"],
                str(r["n_shared"]),
                fmt(r["mean_a"], sc),
                fmt(r["mean_b"], sc),
                fmt(r["difference"], sc),
                f"[{fmt(r['ci_low'], sc)}, {fmt(r['ci_high'], sc)}]",
                r["test"] + (f" b01={r['b01']} b10={r['b10']}" if "b01" in r else ""),
                fmt(r["p_value"], 1, 4),
                fmt(r["p_adjusted"], 1, 4),
                "yes" if r["significant"] else "no",
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for k, row in enumerate(table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_family(result: dict[str, Any]) -> str:
    """One line per (B, metric) of a RUN_A-vs-all family, Holm over the whole family."""
    rows = result["comparisons"]
    if not rows:
        return "no metric in common"
    s = result["settings"]
    lines = [
        f"A = #{rows[0]['a_id']} {rows[0]['a']}; Holm over {result['family_size']} comparisons at alpha "
        f"{s['alpha']} ({s['n_resamples']} resamples, seed {s['seed']})",
        "| B | metric | A | B | A-B [95% CI] | test | p (Holm) | significant |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        sc = r["scale"]
        if r["p_value"] is None:
            lines.append(f"| {r['b']} | {r['label']} | not tested: {r['reason'] or 'no p-value'} ||||||")
            continue
        lines.append(
            f"| {r['b']} | {r['label']} | {fmt(r['mean_a'], sc)} | {fmt(r['mean_b'], sc)} | "
            f"{fmt(r['difference'], sc)} [{fmt(r['ci_low'], sc)}, {fmt(r['ci_high'], sc)}] | "
            f"{r['test'].split(' ')[0]} | {fmt(r['p_adjusted'], 1, 4)} | {'yes' if r['significant'] else 'no'} |"
        )
    return "\n".join(lines)


def _show(result: dict[str, Any], as_json: bool, table: Callable[[dict[str, Any]], str]) -> None:
    if as_json:
        echo_json(result)
    else:
        say(table(result))


@leaderboard.command()
@argument("run_a", metavar="RUN_A", help="run id (#3), exact name, eval id or unique name fragment")
@argument("run_b", metavar="[RUN_B]", required=False, help="the other run (or --all)")
@click.option(
    "--all",
    "all_runs",
    is_flag=True,
    help="compare RUN_A with every other run on its board (one Holm family)",
)
@click.option("--metric", multiple=True, help="metric(s) to compare (default: headline)")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
@with_settings
@with_store
def compare(
    store: Store,
    run_a: str,
    run_b: str | None,
    all_runs: bool,
    metric: tuple[str, ...],
    as_json: bool,
    settings: Settings,
) -> None:
    """Paired tests of two stored runs on their shared items."""
    from koblex_tasks.leaderboard.board import compare_runs

    if all_runs == (run_b is not None):
        raise click.UsageError("give either RUN_B or --all")
    metrics = list(metric) or None
    a = store.find_run(run_a)
    if run_b is None:
        others = [r for r in store.runs(a.board_key) if r.run_id != a.run_id]
        if not others:
            raise CommandError(f"run #{a.run_id} is alone on its board")
        _show(
            _as_dict(compare_runs(store, [(a, o) for o in others], metrics, settings)), as_json, format_family
        )
        return
    b = store.find_run(run_b)
    if a.run_id == b.run_id:
        raise CommandError("RUN_A and RUN_B are the same run")
    if a.benchmark != b.benchmark:
        raise CommandError(f"runs are on different benchmarks ({a.benchmark} vs {b.benchmark})")
    result = _as_dict(compare_runs(store, [(a, b)], metrics, settings))
    if a.board_key != b.board_key:
        result["warning"] = (
            f"the runs are on different boards ({a.board_label!r} vs {b.board_label!r}); "
            "they are compared on their shared items only"
        )
        say(f"warning: {result['warning']}", err=True)
    if metrics and not result["comparisons"]:
        raise CommandError(f"neither run has metric(s) {metrics}")
    _show(result, as_json, format_comparison)


@leaderboard.command("list")
@with_store
def list_runs(store: Store) -> None:
    """List stored runs by board."""
    from koblex_tasks.leaderboard.titles import store_titles

    runs = store.runs()
    if not runs:
        say(f"no runs in {store.path}")
    titles = store_titles(store)  # the page's and the exports' wording and counts
    board = None
    for r in sorted(runs, key=lambda r: (r.board_key, r.run_id)):
        if r.board_key != board:
            board = r.board_key
            say(f"\n[{titles.get(r.board_key, r.board_label)}]")
        say(f"  #{r.run_id:<4} {r.name}  ({r.model}, {r.created[:10]})")


def _interactive() -> bool:
    """Whether a person can answer a question (stdin is a terminal)."""
    return sys.stdin.isatty()


@leaderboard.command()
@argument("run", help="run id (#3 or 3), exact run name or exact eval id (never a fragment)")
@click.option("--yes", "-y", is_flag=True, help="delete without asking (needed when stdin is not a terminal)")
@with_store
def remove(store: Store, run: str, yes: bool) -> None:
    """Delete one stored run, after showing it and asking."""
    found = store.find_run(run, exact=True)
    n_items, n_scores = store.run_size(found.run_id)
    say(
        f"run #{found.run_id} '{found.name}' ({found.model}) on board '{found.board_label}': "
        f"{n_items} items, {n_scores} scores, submitted {found.submitted_at}"
    )
    if not yes:
        if not _interactive():
            raise CommandError("stdin is not a terminal: pass --yes to delete without asking")
        if not click.confirm("delete it?", default=False):
            click.echo("nothing deleted")
            return
    store.remove(found.run_id)
    say(f"removed run #{found.run_id} '{found.name}'")


@leaderboard.command("audit-attach")
@argument("json_file", metavar="JSON")
@click.option("--judge-model", default=None, help="judge model name (default: from the report's labellers)")
@with_store
def audit_attach(store: Store, json_file: str, judge_model: str | None) -> None:
    """Store a `koblex judge-audit --json` report, keyed by judge model."""
    _attach(store, json_file, judge_model)


def leaderboard_main(argv: list[str] | None = None) -> int:
    """`koblex leaderboard ARGV`; returns the exit code instead of raising SystemExit."""
    return run(koblex, argv, PROG, ["leaderboard"])


if __name__ == "__main__":
    sys.exit(leaderboard_main())
