"""Reading a submitted eval log: anything Inspect cannot read is a rejection, never a crash."""

import zipfile
from pathlib import Path

from inspect_ai.log import EvalLog, EvalSample, read_eval_log

from koblex_tasks.leaderboard.rejection import SubmissionRejected


def read_log(path: Path) -> tuple[EvalLog, list[EvalSample]]:
    """The log and its samples; a missing, truncated or unparsable file raises SubmissionRejected."""
    if not path.is_file():
        raise SubmissionRejected(path, ["file not found"])
    if path.suffix == ".eval" and not zipfile.is_zipfile(path):
        raise SubmissionRejected(
            path, ["not a readable Inspect eval log: the .eval zip is truncated or corrupt"]
        )
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # any parse failure is a rejection, never a crash
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SubmissionRejected(path, [f"not a readable Inspect eval log: {msg[:300]}"]) from None
    return log, list(log.samples or [])
