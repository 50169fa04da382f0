"""`koblex`: the commands that are not `inspect eval` (replay of released predictions, judge audit)."""

import argparse
import json
import sys

from koblex_tasks.errors import DataError


def _replay_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="turn a released prediction file into a scored Inspect eval log")
    p.add_argument("file", help="released prediction file, e.g. parser_gpt4o.jsonl")
    p.add_argument(
        "--data", default=None, help="local KoBLEX questions JSONL (default: Hugging Face dataset)"
    )
    p.add_argument("--official", action="store_true", help="score exactly like the paper's evaluation script")
    p.add_argument("--log-dir", default="logs", help="where the eval log is written (default: ./logs)")
    p.add_argument("--method", default=None, help="method name to record (default: inferred from file name)")
    p.add_argument(
        "--model-name", default=None, help="model name to record (default: inferred from file name)"
    )


def _replay(args: argparse.Namespace) -> int:
    from koblex_tasks.replay_run import run_replay

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
        from koblex_tasks.audit.cli import judge_audit_main

        return judge_audit_main(argv[1:])
    parser = argparse.ArgumentParser(prog="koblex", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    _replay_parser(sub)
    sub.add_parser("judge-audit", help="agreement between issue labellers (see `koblex judge-audit -h`)")
    args = parser.parse_args(argv)
    try:
        return {"replay": _replay}[args.command](args)
    except (DataError, RuntimeError, ValueError) as exc:
        print(f"koblex {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
