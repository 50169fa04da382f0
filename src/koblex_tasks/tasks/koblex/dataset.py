"""KoBLEX questions: loading (hub or local JSONL), validation, and conversion to Inspect samples."""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from koblex_tasks.corpus.provision import provision_key
from koblex_tasks.errors import DataError
from koblex_tasks.hub import INSPECT_HINT, load_hub_rows
from koblex_tasks.jsonl import read_jsonl

KOBLEX_HF_REPO = "JihyungL/KoBLEX-koblex"
KOBLEX_HF_SPLIT = "test"
# No immutable revision of the hub dataset is known yet; None = "main". The resolved label and a content
# fingerprint go into the log, so a silent upstream change is still detectable.
KOBLEX_HF_REVISION: str | None = None

LANG_SUFFIX = {"ko": "", "en": "_eng"}
TEXT_FIELDS = ("question", "answer", "background")


@dataclass(frozen=True)
class KoblexData:
    records: list[dict[str, Any]]
    source: str
    fingerprint: str


def _validate(record: dict[str, Any], source: str, line: int, lang: str) -> None:
    suffix = LANG_SUFFIX[lang]
    if not isinstance(record.get("id"), str) or not record["id"]:
        raise DataError(source, line, "missing or empty field 'id'")
    for name in TEXT_FIELDS:
        field = name + suffix
        if field not in record:
            raise DataError(source, line, f"missing field '{field}'")
        if not isinstance(record[field], str):
            raise DataError(source, line, f"field '{field}' must be a string")
    contexts = record.get("contexts")
    if not isinstance(contexts, list) or not contexts:
        raise DataError(source, line, "field 'contexts' must be a non-empty list of gold provisions")
    for i, ctx in enumerate(contexts):
        for part in ("hierarchy", "content"):
            if not isinstance(ctx, dict) or not isinstance(ctx.get(part + suffix), str):
                raise DataError(source, line, f"contexts[{i}] lacks a string '{part + suffix}'")
    n_hops = record.get("n_hops")
    if "n_hops" in record and (isinstance(n_hops, bool) or not isinstance(n_hops, int)):  # True is an int
        raise DataError(source, line, "field 'n_hops' must be an integer")


def fingerprint_records(records: list[dict[str, Any]]) -> str:
    digest = hashlib.sha256()
    for record in records:
        digest.update(json.dumps(record, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    return digest.hexdigest()


def load_koblex(
    data: str | None = None,
    lang: str = "ko",
    revision: str | None = KOBLEX_HF_REVISION,
    hub_hint: str = INSPECT_HINT,
) -> KoblexData:
    """Read and validate the questions; duplicate ids are an error naming both lines.

    `hub_hint` is how the calling tool passes a local file instead of the hub (said when the hub is out of reach).
    """
    if lang not in LANG_SUFFIX:
        raise ValueError(f"lang must be one of {sorted(LANG_SUFFIX)}, got {lang!r}")
    if data is not None:
        source = str(Path(data))
        if not Path(data).is_file():
            raise DataError(source, None, "questions file not found")
        numbered = list(read_jsonl(source))
    else:
        rows, source = load_hub_rows(KOBLEX_HF_REPO, KOBLEX_HF_SPLIT, revision, hub_hint)
        numbered = list(enumerate(rows, start=1))
    seen: dict[str, int] = {}
    for line, record in numbered:
        _validate(record, source, line, lang)
        if record["id"] in seen:
            raise DataError(
                source, line, f"duplicate id {record['id']!r} (first at line {seen[record['id']]})"
            )
        seen[record["id"]] = line
    if not numbered:
        raise DataError(source, None, "no questions in the dataset")
    records = [record for _, record in numbered]
    return KoblexData(records=records, source=source, fingerprint=fingerprint_records(records))


def hop_counts(records: list[dict[str, Any]]) -> list[int]:
    """The distinct numbers of gold provisions in the data (the `hops` a run can select), ascending."""
    return sorted({len(r["contexts"]) for r in records})


def gold_provisions(record: dict[str, Any], lang: str) -> list[str]:
    suffix = LANG_SUFFIX[lang]
    return [provision_key(c["hierarchy" + suffix], c["content" + suffix]) for c in record["contexts"]]


def record_to_sample(
    record: dict[str, Any], lang: str, extra_metadata: dict[str, Any] | None = None
) -> Sample:
    """Input = background + question; target = the reference answer; gold provisions and hops in metadata.

    `hop_count` is the number of gold provisions (the paper's 55/125/46 split); the file's own `n_hops`
    disagrees on 6 items and is kept as `n_hops` for reference.
    """
    suffix = LANG_SUFFIX[lang]
    background, question = record["background" + suffix], record["question" + suffix]
    gold = gold_provisions(record, lang)
    metadata = {
        "background": background,
        "question": question,
        "gold_provisions": gold,
        "hop_count": len(gold),
        "n_hops": record.get("n_hops"),
        "lang": lang,
        **(extra_metadata or {}),
    }
    question_label = "Question" if lang == "en" else "질문"
    return Sample(
        id=record["id"],
        input=f"{background}\n\n{question_label}: {question}",
        target=record["answer" + suffix],
        metadata=metadata,
    )


def koblex_dataset(
    data: KoblexData, lang: str, extra_metadata: dict[str, Any] | None = None
) -> MemoryDataset:
    samples = [record_to_sample(r, lang, extra_metadata) for r in data.records]
    return MemoryDataset(samples=samples, name="koblex", location=data.source)
