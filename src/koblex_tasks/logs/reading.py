"""Reading a submitted eval log: anything unsafe or unreadable is a rejection, never a crash or a memory blow-up.

An `.eval` zip is checked member by member as a stream before Inspect reads it (`archive.check_archive`:
duplicate names, per-member and total inflated size, integrity); a `.json` log is capped by its file size,
since Inspect parses it whole. Samples are read without their transcripts (`events`, `messages`,
`attachments`): validation reads outputs, stores, metadata and scores from them, so a long transcript costs
no memory. The event rules (`event_rules`) then read each sample's events, one sample at a time.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from inspect_ai.log import EvalLog, EvalSample, read_eval_log

from koblex_tasks.logs.archive import ArchiveRefused, ReadLimits, check_archive
from koblex_tasks.logs.rejection import SubmissionRejected

__all__ = ["ReadLimits", "read_log"]

TRANSCRIPT_FIELDS = {"events", "messages", "attachments"}


def _check_file(path: Path, limits: ReadLimits) -> None:
    if path.suffix == ".eval" or zipfile.is_zipfile(path):
        with path.open("rb") as fh:
            check_archive(fh, limits)
        return
    size = path.stat().st_size
    if size > limits.total_bytes:
        raise ArchiveRefused(
            f"the JSON log is {size / (1 << 20):,.1f} MiB (limit {limits.total_bytes / (1 << 20):,.1f} MiB)"
        )


def read_log(path: Path, limits: ReadLimits | None = None) -> tuple[EvalLog, list[EvalSample]]:
    """The log and its samples; a missing, oversized, truncated or unparsable file raises SubmissionRejected."""
    if not path.is_file():
        raise SubmissionRejected(path, ["file not found"])
    try:
        _check_file(path, limits or ReadLimits())
    except ArchiveRefused as exc:
        raise SubmissionRejected(path, [f"not a readable Inspect eval log: {exc}"]) from None
    try:
        log = read_eval_log(str(path), exclude_fields=TRANSCRIPT_FIELDS)
    except Exception as exc:  # any parse failure is a rejection, never a crash
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SubmissionRejected(path, [f"not a readable Inspect eval log: {msg[:300]}"]) from None
    return log, list(log.samples or [])
