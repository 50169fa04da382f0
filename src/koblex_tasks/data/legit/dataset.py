"""The LEGIT test split: download (pinned commit, SHA-256) or local path, strict validation, Inspect samples.

Records (one JSON object per line): `doc_id`, `issue_id` (always "" in the test split), `question`, `answer`,
`issues` (an issue tree, see `tasks/legit/issues.py`) and `difficulty` (derived from the node count).
"""

import os
import tempfile
import urllib.request
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from koblex_tasks.benchmarks.legit.issues import (
    DIFFICULTIES,
    ROOT_ID,
    Claim,
    Issue,
    difficulty_for,
    issue_path,
    parent_id,
)
from koblex_tasks.benchmarks.legit.spec import LEGIT
from koblex_tasks.corpus.cache import cache_root, file_sha256
from koblex_tasks.data.legit.rows import read_by_doc
from koblex_tasks.errors import DataError

LEGIT_REPO = "jinulee-v/LEGIT"
LEGIT_COMMIT = "1defd44082d3c221841ecf7c7c3d5a3fb5b61fdc"
LEGIT_TEST_PATH = "data/reasoning_tasks_test.jsonl"
LEGIT_TEST_URL = f"https://raw.githubusercontent.com/{LEGIT_REPO}/{LEGIT_COMMIT}/{LEGIT_TEST_PATH}"
# The SHA-256 of the file at LEGIT_COMMIT. It could not be computed when this was written (no internet on the
# build machine), so it is None: the first download records the digest it saw next to the cached file and
# warns; every later use verifies against that record. Fill this constant from the warning (or from
# `sha256sum` of a trusted download) to turn trust-on-first-use into a real pin. `KOBLEX_LEGIT_SHA256`
# overrides it.
LEGIT_TEST_SHA256: str | None = None
LEGIT_TEST_SIZE = LEGIT.official_size

_ISSUE_FIELDS = ("id", "summary", "claim", "relevant_law", "analysis", "conclusion")


@dataclass(frozen=True)
class LegitRecord:
    doc_id: str
    issue_id: str
    question: str
    answer: str
    issues: tuple[Issue, ...]
    difficulty: str
    line: int = 0

    @property
    def issue_ids(self) -> list[str]:
        return [i.id for i in self.issues]


@dataclass(frozen=True)
class LegitData:
    records: list[LegitRecord]
    source: str
    sha256: str
    notes: list[str] = field(default_factory=list)


def _string(obj: dict[str, Any], key: str, where: str, line: int, empty_ok: bool = True) -> str:
    if key not in obj:
        raise DataError(where, line, f"missing field '{key}'")
    value = obj[key]
    if not isinstance(value, str):
        raise DataError(where, line, f"field '{key}' must be a string, got {type(value).__name__}")
    if not empty_ok and not value.strip():
        raise DataError(where, line, f"field '{key}' is empty")
    return value


def _issue(raw: Any, index: int, where: str, line: int) -> Issue:
    label = f"issues[{index}]"
    if not isinstance(raw, dict):
        raise DataError(where, line, f"{label} must be an object, got {type(raw).__name__}")
    for key in _ISSUE_FIELDS:
        if key not in raw:
            raise DataError(where, line, f"{label} is missing field '{key}'")
    issue_id = raw["id"]
    if not isinstance(issue_id, str):
        raise DataError(where, line, f"{label}.id must be a string, got {type(issue_id).__name__}")
    try:
        issue_path(issue_id)
    except ValueError as exc:
        raise DataError(where, line, f"{label}: {exc}") from None
    label = f"issue {issue_id!r}"
    for key in ("summary", "conclusion"):
        if not isinstance(raw[key], str):
            raise DataError(where, line, f"{label}: field '{key}' must be a string")
    if not raw["conclusion"].strip():
        raise DataError(where, line, f"{label}: empty conclusion (the judge cannot grade against it)")
    claims_raw = raw["claim"]
    if not isinstance(claims_raw, list):
        raise DataError(where, line, f"{label}: field 'claim' must be a list")
    claims = []
    for n, claim in enumerate(claims_raw):
        ok = (
            isinstance(claim, dict)
            and isinstance(claim.get("claimer"), str)
            and isinstance(claim.get("content"), str)
        )
        if not ok:
            raise DataError(where, line, f"{label}: claim[{n}] must be {{'claimer': str, 'content': str}}")
        claims.append(Claim(claim["claimer"], claim["content"]))
    lists = {}
    for key in ("relevant_law", "analysis"):
        value = raw[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise DataError(where, line, f"{label}: field '{key}' must be a list of strings")
        lists[key] = tuple(value)
    return Issue(
        id=issue_id,
        summary=raw["summary"],
        claims=tuple(claims),
        relevant_law=lists["relevant_law"],
        analysis=lists["analysis"],
        conclusion=raw["conclusion"],
    )


def validate_record(obj: dict[str, Any], where: str, line: int) -> LegitRecord:
    """One record, checked strictly; any problem is a DataError naming file and line."""
    doc_id = _string(obj, "doc_id", where, line, empty_ok=False)
    issue_id = _string(obj, "issue_id", where, line)
    question = _string(obj, "question", where, line, empty_ok=False)
    answer = _string(obj, "answer", where, line, empty_ok=False)
    difficulty = _string(obj, "difficulty", where, line)
    raw_issues = obj.get("issues")
    if not isinstance(raw_issues, list) or not raw_issues:
        raise DataError(where, line, "field 'issues' must be a non-empty list")
    issues = tuple(_issue(raw, n, where, line) for n, raw in enumerate(raw_issues))
    ids = [i.id for i in issues]
    seen: set[str] = set()
    for issue_id_ in ids:
        if issue_id_ in seen:
            raise DataError(where, line, f"duplicate issue id {issue_id_!r}")
        seen.add(issue_id_)
    if ROOT_ID not in seen:
        raise DataError(where, line, "the issue tree has no root (id '')")
    for issue_id_ in ids:
        parent = parent_id(issue_id_)
        if parent is not None and parent not in seen:
            raise DataError(where, line, f"issue {issue_id_!r} has no parent {parent!r} in the tree")
    if difficulty not in DIFFICULTIES:
        raise DataError(where, line, f"difficulty must be one of {DIFFICULTIES}, got {difficulty!r}")
    expected = difficulty_for(len(issues))
    if difficulty != expected:
        raise DataError(
            where,
            line,
            f"difficulty {difficulty!r} does not match {len(issues)} issues (expected {expected!r})",
        )
    return LegitRecord(doc_id, issue_id, question, answer, issues, difficulty, line)


def read_legit_file(path: str | Path) -> list[LegitRecord]:
    def parse(obj: dict[str, Any], where: str, line: int) -> tuple[str, LegitRecord]:
        record = validate_record(obj, where, line)
        return record.doc_id, record

    return [record for _, record in read_by_doc(path, parse, "records").values()]


# ----------------------------------------------------------------------------------------------------------
# Download and cache


def legit_cache_dir() -> Path:
    return cache_root() / "legit" / LEGIT_COMMIT


def expected_sha256() -> str | None:
    return os.environ.get("KOBLEX_LEGIT_SHA256") or LEGIT_TEST_SHA256


def _download(url: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".download-")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as response:
            while block := response.read(1 << 20):
                out.write(block)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fetch_legit_test(url: str = LEGIT_TEST_URL) -> tuple[Path, list[str]]:
    """The cached test file (downloading it once), verified by SHA-256. Returns (path, notes)."""
    directory = legit_cache_dir()
    path = directory / Path(LEGIT_TEST_PATH).name
    record = path.with_suffix(path.suffix + ".sha256")
    notes: list[str] = []
    if not path.is_file():
        try:
            _download(url, path)
        except OSError as exc:
            raise DataError(
                url,
                None,
                f"could not download the LEGIT test split ({exc}); pass a local copy instead "
                "(-T data=PATH for inspect eval, --data PATH for koblex replay)",
            ) from exc
    actual = file_sha256(path)
    pinned = expected_sha256()
    if pinned is not None:
        if actual != pinned:
            path.unlink(missing_ok=True)
            raise DataError(
                str(path), None, f"SHA-256 {actual} does not match the pinned {pinned}; removed it"
            )
        return path, notes
    if record.is_file():
        recorded = record.read_text(encoding="utf-8").strip()
        if actual != recorded:
            raise DataError(
                str(path), None, f"SHA-256 {actual} differs from the digest recorded at download ({recorded})"
            )
        notes.append(
            f"verified against the digest recorded at first download ({recorded}); no pinned checksum"
        )
        return path, notes
    record.write_text(actual + "\n", encoding="utf-8")
    message = (
        f"LEGIT test split downloaded from {url} with SHA-256 {actual}; no checksum is pinned yet: set "
        "koblex_tasks.data.legit.dataset.LEGIT_TEST_SHA256 to this value once it has been checked"
    )
    warnings.warn(message, stacklevel=2)
    notes.append(message)
    return path, notes


def load_legit(data: str | None = None) -> LegitData:
    """The LEGIT test split: `data` (a local JSONL) or the pinned download."""
    notes: list[str] = []
    if data is None:
        path, notes = fetch_legit_test()
        source = LEGIT_TEST_URL
    else:
        path = Path(data)
        source = str(path)
    records = read_legit_file(path)
    if data is None and len(records) != LEGIT_TEST_SIZE:
        raise DataError(str(path), None, f"expected {LEGIT_TEST_SIZE} records, got {len(records)}")
    return LegitData(records=records, source=source, sha256=file_sha256(Path(path)), notes=notes)


# ----------------------------------------------------------------------------------------------------------
# Inspect samples


def record_to_sample(record: LegitRecord, extra_metadata: dict[str, Any] | None = None) -> Sample:
    return Sample(
        id=record.doc_id,
        input=record.question,
        target=record.answer,
        metadata={
            "doc_id": record.doc_id,
            "difficulty": record.difficulty,
            "n_issues": len(record.issues),
            "issues": [i.as_dict() for i in record.issues],
            **(extra_metadata or {}),
        },
    )


def legit_dataset(
    records: list[LegitRecord], name: str = "legit", extra_metadata: dict[str, Any] | None = None
) -> MemoryDataset:
    return MemoryDataset([record_to_sample(r, extra_metadata) for r in records], name=name)
