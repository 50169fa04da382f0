"""Cost of a safe submission: re-deriving a 226-sample ParSeR log's scores, and peak memory on hostile zips.

Run by hand: ``python bench/bench_submit.py [--log PARSER.eval] [--baseline-src DIR]``. The log defaults to
the ParSeR replay in ``$KOBLEX_LEADERBOARD_TEST_LOGS``, else the released ParSeR file is replayed from
``$KOBLEX_SHARED_DATA`` (about 15 s). Rows:

- the archive check (every member inflated as a stream, counted, CRC-checked) and Inspect's read;
- re-deriving every stored score (226 samples x 2 scorers): in a fresh process (scorer imports included),
  then warm;
- `load_submission` end to end;
- peak RSS (``ru_maxrss`` of a fresh process that submits one file and exits) for the real log, a 3 MB
  `.eval` whose sample member inflates to 1.75 GiB, and one whose header is padded with 900 MiB.
  ``--baseline-src DIR`` repeats the RSS rows with the package imported from DIR (e.g. an older checkout's
  ``src``), for a before/after figure.

The hostile files are built in a temporary directory (streamed: building them needs no memory either).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
MIB = 1 << 20
PAD = b" " * MIB  # whitespace inside a JSON object: the padded member stays valid JSON
RSS_PROBE = """
import resource, sys
from koblex_tasks.leaderboard.submission import SubmissionRejected, load_submission
try:
    load_submission(sys.argv[1])
    outcome = "accepted"
except SubmissionRejected as exc:
    outcome = "refused: " + exc.reasons[0][:90]
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, outcome)
"""


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def parser_log(given: str | None, tmp: Path) -> Path:
    if given:
        return Path(given)
    reuse = os.environ.get("KOBLEX_LEADERBOARD_TEST_LOGS")
    if reuse:
        from inspect_ai.log import read_eval_log

        for path in sorted(Path(reuse).glob("*.eval")):
            if read_eval_log(str(path), header_only=True).eval.solver_args.get("method") == "parser":
                return path
    from koblex_tasks.tasks.koblex.replay import run_replay

    data = Path(os.environ["KOBLEX_SHARED_DATA"]) / "koblex"
    result = run_replay(
        str(data / "released_gpt4o" / "parser_gpt4o.jsonl"),
        data=str(data / "koblex.jsonl"),
        official=True,
        log_dir=str(tmp / "logs"),
    )
    return Path(result.log.location)


def padded_copy(src: Path, dst: Path, member: Callable[[list[str]], str], pad_mib: int) -> Path:
    """A copy of `src` whose chosen member gets `pad_mib` MiB of whitespace after its opening brace (deflate)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        names = zin.namelist()
        target = member(names)
        for name in names:
            data = zin.read(name)
            if name != target:
                zout.writestr(name, data)
                continue
            with zout.open(name, "w", force_zip64=True) as out:
                out.write(data[:1])  # "{"
                for _ in range(pad_mib):
                    out.write(PAD)
                out.write(data[1:])
    return dst


def peak_rss(path: Path, src: str | None) -> str:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-c", RSS_PROBE, str(path)], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        return f"process failed ({proc.returncode}): {proc.stderr.strip().splitlines()[-1][:100]}"
    mib, _, outcome = proc.stdout.strip().rpartition("\n")[2].partition(" ")
    return f"{int(mib):>6,} MiB  {outcome}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log", help="a 226-sample ParSeR .eval log")
    ap.add_argument(
        "--baseline-src", help="also measure peak RSS with the package imported from this src dir"
    )
    ap.add_argument(
        "--bomb-mib", type=int, default=1792, help="inflated size of the sample bomb (default 1.75 GiB)"
    )
    ap.add_argument(
        "--header-mib", type=int, default=900, help="whitespace added to header.json (default 900)"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_text:
        tmp = Path(tmp_text)
        log = parser_log(args.log, tmp)
        rows = _timings(log)
        t, bomb = timed(
            lambda: padded_copy(
                log,
                tmp / "bomb.eval",
                lambda ns: next(n for n in ns if n.startswith("samples/")),
                args.bomb_mib,
            )
        )
        header = padded_copy(log, tmp / "header.eval", lambda ns: "header.json", args.header_mib)
        print(f"log: {log}")
        width = max(len(r[0]) for r in rows)
        for label, seconds in rows:
            print(f"{label.ljust(width)}  {seconds:7.3f} s")
        print(
            f"\nbuilt {bomb.name} ({bomb.stat().st_size / MIB:.1f} MB, inflates to {args.bomb_mib:,} MiB) in {t:.0f} s"
        )
        cases = {
            "real log": log,
            f"sample bomb ({args.bomb_mib:,} MiB)": bomb,
            f"header + {args.header_mib} MiB": header,
        }
        trees = {"this tree": None, f"baseline {args.baseline_src}": args.baseline_src}
        for tree, src in trees.items():
            if tree == "this tree" or src:
                print(f"\npeak RSS of one submission, {tree}:")
                for label, path in cases.items():
                    print(f"  {label.ljust(24)} {peak_rss(path, src)}")


def _timings(log: Path) -> list[tuple[str, float]]:
    """Wall times of each submission step on `log` (this process: the first re-derivation imports the scorers)."""
    from koblex_tasks.leaderboard.submission import load_submission
    from koblex_tasks.logs.archive import ReadLimits, check_archive
    from koblex_tasks.logs.identity import identify
    from koblex_tasks.logs.reading import read_log
    from koblex_tasks.logs.rederivation import check_rederived
    from koblex_tasks.logs.rejection import Problems

    def archive() -> None:
        with log.open("rb") as fh:
            check_archive(fh, ReadLimits())

    rows = [("archive check (stream-inflate every member)", timed(archive)[0])]
    t, (parsed, samples) = timed(lambda: read_log(log))
    rows.append((f"read_log ({len(samples)} samples, transcripts skipped)", t))
    problems = Problems(log)
    run = identify(parsed, problems)
    n_scores = sum(len(s.scores or {}) for s in samples)
    rows.append(
        (
            f"re-derive {n_scores} scores, first call (imports scorers)",
            timed(lambda: check_rederived(parsed, samples, run, problems))[0],
        )
    )
    rows.append(
        (
            f"re-derive {n_scores} scores, warm",
            timed(lambda: check_rederived(parsed, samples, run, problems))[0],
        )
    )
    assert not problems.reasons, problems.reasons
    rows.append(("load_submission end to end (warm)", timed(lambda: load_submission(log))[0]))
    return rows


if __name__ == "__main__":
    main()
