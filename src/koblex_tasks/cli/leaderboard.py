"""`koblex leaderboard`: submit eval logs, build the static site, compare two runs on the terminal."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from koblex_tasks.leaderboard.store import ENV_DB

PROG = "koblex leaderboard"


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db", default=None, help=f"leaderboard database (default: ${ENV_DB} or the user data dir)"
    )


def _stats_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
    p.add_argument("--seed", type=int, default=0, help="random seed of resamples and sign flips (default 0)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level after Holm (default 0.05)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("submit", help="validate Inspect eval logs and store them (one transaction each)")
    p.add_argument("logs", nargs="+", metavar="LOG", help=".eval or .json Inspect eval log(s)")
    p.add_argument("--name", default=None, help="display name (default: '<model> · <method or solver>')")
    p.add_argument(
        "--allow-subset",
        action="store_true",
        help="store a subset run (--limit, hops=...) on a separate board",
    )
    p.add_argument(
        "--audit", default=None, metavar="JSON", help="also attach a `koblex judge-audit --json` file"
    )
    p.add_argument("--dry-run", action="store_true", help="validate only, store nothing")
    _common(p)
    p = sub.add_parser("build", help="write the static site (index.html) and JSON/CSV/Markdown exports")
    p.add_argument("--out", required=True, help="output directory")
    _stats_opts(p)
    _common(p)
    p = sub.add_parser("compare", help="paired tests of two stored runs on their shared items")
    p.add_argument("run_a", metavar="RUN_A", help="run id (#3), exact name, eval id or unique name fragment")
    p.add_argument("run_b", metavar="RUN_B", nargs="?", help="the other run (or --all)")
    p.add_argument(
        "--all", action="store_true", help="compare RUN_A with every other run on its board (one Holm family)"
    )
    p.add_argument("--metric", action="append", default=None, help="metric(s) to compare (default: headline)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    _stats_opts(p)
    _common(p)
    p = sub.add_parser("list", help="list stored runs by board")
    _common(p)
    p = sub.add_parser("remove", help="delete a stored run")
    p.add_argument("run", metavar="RUN")
    _common(p)
    p = sub.add_parser(
        "audit-attach", help="store a `koblex judge-audit --json` report, keyed by judge model"
    )
    p.add_argument("json_file", metavar="JSON")
    p.add_argument(
        "--judge-model", default=None, help="judge model name (default: from the report's labellers)"
    )
    _common(p)
    return parser


def _settings(args: argparse.Namespace):
    from koblex_tasks.leaderboard.board import Settings

    if args.resamples < 1:
        raise ValueError("--resamples must be at least 1")
    if not 0 < args.alpha < 1:
        raise ValueError("--alpha must be in (0, 1)")
    return Settings(n_resamples=args.resamples, seed=args.seed, alpha=args.alpha)


def _attach(store, path: str, judge_model: str | None) -> None:
    from koblex_tasks.leaderboard.audit import load_audit

    report, summaries = load_audit(path, judge_model)
    for model, summary in summaries.items():
        store.attach_audit(model, {**summary, "source": str(path)}, report)
        alpha = summary["alpha"]
        print(
            f"attached judge audit for {model}: alpha vs lawyers {'–' if alpha is None else f'{alpha:.3f}'}"
        )


def _submit(args: argparse.Namespace, store) -> int:
    from koblex_tasks.leaderboard.submission import SubmissionRejected, load_submission

    if args.name and len(args.logs) > 1:
        raise ValueError("--name needs exactly one LOG")
    failed = 0
    for log in args.logs:
        try:
            sub = load_submission(log, name=args.name, allow_subset=args.allow_subset)
            if args.dry_run:
                print(f"valid: {log} -> {sub.name!r} on board {sub.board_label!r} (not stored: --dry-run)")
                continue
            run_id = store.add(sub)
        except SubmissionRejected as exc:
            failed += 1
            print(f"{PROG} submit: {exc}", file=sys.stderr)
            continue
        print(f"stored run #{run_id} {sub.name!r} ({len(sub.strata)} items) on board {sub.board_label!r}")
    if args.audit:
        _attach(store, args.audit, None)
    return 1 if failed else 0


def _build(args: argparse.Namespace, store) -> int:
    from koblex_tasks.leaderboard.board import compute_all
    from koblex_tasks.leaderboard.site import write_site

    data = compute_all(store, _settings(args))
    index = write_site(data, args.out)
    n_runs = sum(len(b["runs"]) for b in data["boards"])
    print(f"wrote {index} ({len(data['boards'])} boards, {n_runs} runs) and JSON/CSV/Markdown exports")
    return 0


def _fmt(v: float | None, scale: float = 1.0, digits: int = 2) -> str:
    return "–" if v is None else f"{v * scale:.{digits}f}"


def format_comparison(result: dict) -> str:
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
                _fmt(r["mean_a"], sc),
                _fmt(r["mean_b"], sc),
                _fmt(r["difference"], sc),
                f"[{_fmt(r['ci_low'], sc)}, {_fmt(r['ci_high'], sc)}]",
                r["test"] + (f" b01={r['b01']} b10={r['b10']}" if "b01" in r else ""),
                _fmt(r["p_value"], 1, 4),
                _fmt(r["p_adjusted"], 1, 4),
                "yes" if r["significant"] else "no",
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for k, row in enumerate(table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_family(result: dict) -> str:
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
            f"| {r['b']} | {r['label']} | {_fmt(r['mean_a'], sc)} | {_fmt(r['mean_b'], sc)} | "
            f"{_fmt(r['difference'], sc)} [{_fmt(r['ci_low'], sc)}, {_fmt(r['ci_high'], sc)}] | "
            f"{r['test'].split(' ')[0]} | {_fmt(r['p_adjusted'], 1, 4)} | {'yes' if r['significant'] else 'no'} |"
        )
    return "\n".join(lines)


def _compare(args: argparse.Namespace, store) -> int:
    from koblex_tasks.leaderboard.board import compare_runs

    a = store.find_run(args.run_a)
    if args.all == (args.run_b is not None):
        raise ValueError("give either RUN_B or --all")
    if args.all:
        others = [r for r in store.runs(a.board_key) if r.run_id != a.run_id]
        if not others:
            raise ValueError(f"run #{a.run_id} is alone on its board")
        result = compare_runs(store, [(a, o) for o in others], args.metric, _settings(args))
        print(json.dumps(result, ensure_ascii=False, allow_nan=False) if args.json else format_family(result))
        return 0
    b = store.find_run(args.run_b)
    if a.run_id == b.run_id:
        raise ValueError("RUN_A and RUN_B are the same run")
    if a.benchmark != b.benchmark:
        raise ValueError(f"runs are on different benchmarks ({a.benchmark} vs {b.benchmark})")
    result = compare_runs(store, [(a, b)], args.metric, _settings(args))
    if a.board_key != b.board_key:
        result["warning"] = (
            f"the runs are on different boards ({a.board_label!r} vs {b.board_label!r}); "
            "they are compared on their shared items only"
        )
        print(f"warning: {result['warning']}", file=sys.stderr)
    if args.metric and not result["comparisons"]:
        raise ValueError(f"neither run has metric(s) {args.metric}")
    print(json.dumps(result, ensure_ascii=False, allow_nan=False) if args.json else format_comparison(result))
    return 0


def _list(args: argparse.Namespace, store) -> int:
    runs = store.runs()
    if not runs:
        print(f"no runs in {store.path}")
    board = None
    for r in sorted(runs, key=lambda r: (r.board_key, r.run_id)):
        if r.board_key != board:
            board = r.board_key
            print(f"\n[{r.board_label}]")
        print(f"  #{r.run_id:<4} {r.name}  ({r.model}, {r.created[:10]})")
    return 0


def _remove(args: argparse.Namespace, store) -> int:
    run = store.find_run(args.run)
    store.remove(run.run_id)
    print(f"removed run #{run.run_id} {run.name!r}")
    return 0


def _audit_attach(args: argparse.Namespace, store) -> int:
    _attach(store, args.json_file, args.judge_model)
    return 0


def leaderboard_main(argv: list[str] | None = None) -> int:
    from koblex_tasks.leaderboard.audit import AuditError
    from koblex_tasks.leaderboard.store import Store

    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    handlers = {
        "submit": _submit,
        "build": _build,
        "compare": _compare,
        "list": _list,
        "remove": _remove,
        "audit-attach": _audit_attach,
    }
    try:
        with Store(Path(args.db) if args.db else None) as store:
            return handlers[args.command](args, store)
    except (LookupError, ValueError, AuditError, OSError) as exc:
        print(f"{PROG} {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(leaderboard_main())
