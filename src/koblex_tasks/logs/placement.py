"""Which board a run belongs to: benchmark, language, dataset, corpus completeness, scoring variant, subset.

Rows on different boards are never ranked together. Everything here is read from the spec and the log header.
A dataset fingerprint the spec does not register (`BenchmarkSpec.dataset_fingerprints`) keeps its own board
(the key holds the fingerprint) and the label says "unverified dataset", so it never reads like the official one.
"""

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from koblex_tasks.logs.coverage import Coverage
from koblex_tasks.logs.identity import RunIdentity
from koblex_tasks.spec import BenchmarkSpec, ids_sha256

UNVERIFIED = "unverified dataset"


def unverified_dataset(spec: BenchmarkSpec, fingerprint: str | None) -> bool:
    """A dataset that is not the official one: the spec registers the official fingerprint(s) and this is none
    of them. A benchmark that registers none (LEGIT: its split's checksum is not known yet) cannot tell."""
    return bool(spec.dataset_fingerprints) and fingerprint not in spec.dataset_fingerprints


@dataclass(frozen=True)
class Placement:
    board_key: str
    board_label: str
    corpus_status: str  # "full" | "partial" | "unknown"
    corpus: dict[str, Any]


def _local_corpus(path_text: str, full_size: int) -> tuple[str, dict[str, Any]]:
    path = Path(path_text)
    if not path.is_file():
        return "unknown", {"kind": "local file (not found at submission)", "path": path_text}
    digest = hashlib.sha256()
    lines = 0
    with path.open("rb") as fh:
        for line in fh:
            digest.update(line)
            lines += bool(line.strip())
    status = "partial" if lines < full_size else "full"
    return status, {"kind": "local file", "path": path_text, "size": lines, "sha256": digest.hexdigest()}


def _recorded_corpus(record: dict[str, Any], full_size: int) -> tuple[str, dict[str, Any]] | None:
    """The corpus the task recorded when the run was built (source, size, fingerprint), if it did."""
    size, fingerprint = record.get("size"), record.get("fingerprint")
    if not isinstance(size, int) or not isinstance(fingerprint, str):
        return None
    source = str(record.get("source") or "")
    kind = "hub statute dataset" if source.startswith("hf:") else "local file"
    recorded = record.get("status")  # the run's own verdict (an article-level pool has no paragraph count)
    status = (
        recorded
        if recorded in ("full", "partial", "unknown")
        else ("partial" if size < full_size else "full")
    )
    return status, {
        "kind": f"{kind} (recorded by the run)",
        "source": source,
        "size": size,
        "fingerprint": fingerprint,
    }


def corpus_of(run: RunIdentity, replay: bool) -> tuple[str, dict[str, Any]]:
    """Corpus completeness and its description.

    Replays re-score predictions the paper produced on its full pool: nothing of ours was retrieved, so their
    `retrieval` metadata (the task default) is not used; they count as full. A run records the corpus it
    loaded (`corpus` in the eval metadata: source, size, fingerprint): fewer paragraphs than the spec's full
    pool is partial. Logs written before that record existed fall back to the settings: the hub corpus
    (``corpus=None``) is full; a local corpus file is measured now (paragraph count and sha256), which
    describes the file as it is at submission, not necessarily as the run used it; a file that is gone is
    unknown. A benchmark whose scores do not depend on a corpus counts as full, and so does a run whose method
    retrieves nothing (closed book): its scores are the same whatever pool was configured, so it is ranked
    with the full-corpus runs it is comparable with, not measured against a file it never read.
    """
    full_size = run.spec.full_corpus_size
    retrieval = run.metadata.get("retrieval") or {}
    if full_size is None:
        return "full", {"kind": "not applicable: scores do not depend on a statute corpus"}
    if replay:
        return "full", {
            "kind": "released predictions (the paper's full corpus; no retrieval re-run)",
            "size": full_size,
        }
    record = run.metadata.get("corpus")
    if isinstance(record, dict) and record.get("retrieves") is False:
        return "full", {"kind": f"not applicable: {record.get('kind', 'the method retrieves nothing')}"}
    recorded = _recorded_corpus(record, full_size) if isinstance(record, dict) else None
    if recorded is not None:
        return recorded
    corpus = retrieval.get("corpus")
    if corpus is None:
        return "full", {
            "kind": "hub statute dataset (log without a corpus record: assumed full)",
            "revision": retrieval.get("corpus_revision") or "main",
            "lang": retrieval.get("lang"),
        }
    status, described = _local_corpus(str(corpus), full_size)
    described["kind"] = f"{described['kind']}; log without a corpus record: measured at submission"
    return status, described


def place(run: RunIdentity, coverage: Coverage, task_args: dict[str, Any], replay: bool) -> Placement:
    spec, meta = run.spec, run.metadata
    corpus_status, corpus = corpus_of(run, replay)
    variants = [f"{label}={meta.get(key)}" for key, label in spec.variants.items()]
    lang = task_args.get("lang") or (meta.get("retrieval") or {}).get("lang") or "ko"
    key_parts = [
        spec.name,
        f"lang={lang}",
        f"dataset={run.fingerprint}",
        f"corpus={corpus_status}",
        *variants,
    ]
    label = " · ".join([spec.name, str(lang), f"{corpus_status} corpus", *variants])
    if unverified_dataset(spec, run.fingerprint):
        label += f" · {UNVERIFIED}"
    if coverage.subset:
        ids_hash = ids_sha256(coverage.sample_ids)[:12]
        key_parts.append(f"subset={ids_hash}")
        of = max(run.dataset_size or 0, run.spec.official_size or 0)  # a forged, lowered size is not the base
        label += f" · SUBSET {len(coverage.sample_ids)}/{of} ({', '.join(coverage.subset_why)})"
    return Placement(" | ".join(key_parts), label, corpus_status, corpus)
