"""`koblex`: the commands that are not `inspect eval`: replay, judge audit, leaderboard."""

import argparse
import json
import sys

from koblex_tasks.errors import DataError


def _replay_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="turn a released prediction file into a scored Inspect eval log")
    p.add_argument("file", help="released prediction file (parser_gpt4o.jsonl) or LEGIT responses file")
    p.add_argument(
        "--benchmark",
        choices=["koblex", "legit"],
        default=None,
        help="which benchmark the file belongs to (default: detected from its first line)",
    )
    p.add_argument("--data", default=None, help="local questions JSONL (default: the published dataset)")
    p.add_argument(
        "--grader", default=None, help="LEGIT only (required): the judge model, e.g. openai/gpt-4.1"
    )
    p.add_argument("--rule", choices=["paper", "official"], default="paper", help="LEGIT only: scoring rule")
    p.add_argument("--official", action="store_true", help="score exactly like the paper's evaluation script")
    p.add_argument("--log-dir", default="logs", help="where the eval log is written (default: ./logs)")
    p.add_argument("--method", default=None, help="method name to record (default: inferred from file name)")
    p.add_argument(
        "--model-name", default=None, help="model name to record (default: inferred from file name)"
    )


def detect_benchmark(file: str) -> str:
    """LEGIT response files have `doc_id`/`response`; KoBLEX prediction files have `question`/`answers`."""
    from koblex_tasks.jsonl import read_jsonl

    for _, first in read_jsonl(file):
        return "legit" if "doc_id" in first and "response" in first else "koblex"
    raise DataError(file, None, "the file is empty")


def _replay_legit(args: argparse.Namespace) -> int:
    from koblex_tasks.replay.legit import run_legit_replay
    from koblex_tasks.scorers.metrics import metric_value

    if args.grader is None:
        raise ValueError("LEGIT answers can only be scored by a judge: pass --grader <model>")
    log = run_legit_replay(
        args.file,
        data=args.data,
        grader=args.grader,
        log_dir=args.log_dir,
        rule=args.rule,
        model_name=args.model_name,
    )
    print(f"benchmark: legit  generator: {log.eval.metadata['generator']}  log: {log.location}")
    headline = {s.name: metric_value(s, "mean") for s in log.results.scores}
    print(json.dumps(headline))
    return 0


def _replay(args: argparse.Namespace) -> int:
    from koblex_tasks.replay.koblex import run_replay

    if (args.benchmark or detect_benchmark(args.file)) == "legit":
        return _replay_legit(args)
    result = run_replay(
        args.file,
        data=args.data,
        official=args.official,
        log_dir=args.log_dir,
        method=args.method,
        model_name=args.model_name,
    )
    print(f"method: {result.method}  model: {result.model}  log: {result.log.location}")
    for name, value in result.headline.items():
        print(f"  {name:<14} {100 * value:6.2f}")
    print(json.dumps(result.headline))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "judge-audit":
        from koblex_tasks.cli.audit import judge_audit_main

        return judge_audit_main(argv[1:])
    if argv and argv[0] == "leaderboard":
        from koblex_tasks.cli.leaderboard import leaderboard_main

        return leaderboard_main(argv[1:])
    parser = argparse.ArgumentParser(prog="koblex", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    _replay_parser(sub)
    sub.add_parser("judge-audit", help="agreement between issue labellers (see `koblex judge-audit -h`)")
    sub.add_parser("leaderboard", help="submit logs, build the site, compare runs (`koblex leaderboard -h`)")
    args = parser.parse_args(argv)
    try:
        return {"replay": _replay}[args.command](args)
    except (DataError, RuntimeError, ValueError) as exc:
        print(f"koblex {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
