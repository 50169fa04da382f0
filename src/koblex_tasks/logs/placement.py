"""Which board a run belongs to: benchmark, language, dataset, corpus completeness, scoring variant, subset.

Rows on different boards are never ranked together. The board is derived from what the log shows happened,
never from what its header says about itself (`Evidence`):

- released predictions: the run's outputs (per item: completion and the evidence its scores follow from,
  epochs collapsed) are among a released file's replay outputs recorded in the benchmark's reference manifest
  (`logs.references`). A log that presents itself as a replay (a replay solver, a `replay/` model) without
  such outputs is refused.
- closed book: no sample records any retrieval or predicted provisions (the manifest's `retrieval_keys`,
  `prediction_keys`), whatever corpus the task loaded; provisions predicted without any recorded retrieval
  are an "unknown corpus"; a header saying the method retrieves nothing while samples record retrieval is
  refused.
- full or partial corpus: the fingerprint of the pool the run recorded, looked up among the corpora the spec
  registers (`BenchmarkSpec.corpus_fingerprints`); any other fingerprint is an "unregistered corpus" board
  named by its size and fingerprint prefix; no fingerprint is an unknown corpus. The recorded size and status
  never move a run; a recorded size or status that contradicts the registered corpus is refused.

A dataset fingerprint the spec does not register (`BenchmarkSpec.dataset_fingerprints`) keeps its own board
(the key holds the fingerprint) and the label says "unverified dataset", so it never reads like the official one.
"""

from dataclasses import dataclass
from typing import Any

from inspect_ai.log import EvalLog, EvalSample

from koblex_tasks.logs.coverage import Coverage
from koblex_tasks.logs.identity import RunIdentity
from koblex_tasks.logs.references import manifest_for, output_digests
from koblex_tasks.logs.rejection import Problems
from koblex_tasks.spec import BenchmarkSpec, ids_sha256
from koblex_tasks.text import folded

UNVERIFIED = "unverified dataset"
UNVERIFIED_REPLAY = "replayed outputs, unverified"


def unverified_dataset(spec: BenchmarkSpec, fingerprint: str | None) -> bool:
    """A dataset that is not the official one: the spec registers the official fingerprint(s) and this is none
    of them. A benchmark that registers none (LEGIT: its split's checksum is not known yet) cannot tell."""
    return bool(spec.dataset_fingerprints) and fingerprint not in spec.dataset_fingerprints


@dataclass(frozen=True)
class Evidence:
    """What the samples show: the released file the outputs are (None: not a released run), and how many
    samples record retrieval."""

    released: str | None
    retrieving: int  # samples that record retrieval
    predicting: int  # samples that record predicted provisions
    known: bool = True  # the benchmark's manifest names what retrieval looks like in a sample
    # the log calls itself a replay of released outputs that no manifest can verify (LEGIT): its answers are
    # not shown to be a model's, so it never shares a board with runs whose answers are
    unverified_replay: str | None = None

    @property
    def closed_book(self) -> bool:
        return self.known and not self.retrieving and not self.predicting

    @property
    def replay(self) -> bool:
        return self.released is not None


def declared_replay(log: EvalLog, run: RunIdentity) -> str | None:
    ev = log.eval
    if ev.solver in run.spec.replay_solvers:
        return f"solver {ev.solver}"
    if folded(str(ev.model)).startswith("replay/"):
        return f"model {ev.model}"
    if run.metadata.get("replay_file"):
        return "task metadata replay_file"
    return None


def gather_evidence(
    log: EvalLog, samples: list[EvalSample], run: RunIdentity, problems: Problems
) -> Evidence:
    """The evidence placement uses; a header contradicting it is a problem."""
    manifest = manifest_for(run.spec.name)
    declared = declared_replay(log, run)
    released, retrieving, predicting = None, 0, 0
    if manifest is not None:
        released = manifest.released_file(output_digests(samples, manifest.output_keys))
        retrieving = sum(any((s.store or {}).get(k) for k in manifest.retrieval_keys) for s in samples)
        predicting = sum(any((s.store or {}).get(k) for k in manifest.prediction_keys) for s in samples)
    if declared and released is None and run.spec.full_corpus_size is not None:
        problems.add(
            f"the log presents itself as released predictions ({declared}) but its outputs are not those of any "
            f"released file the benchmark knows (reference manifest): it is ranked only as what it is"
        )
    record = run.metadata.get("corpus")
    if isinstance(record, dict) and record.get("retrieves") is False and retrieving:
        problems.add(
            f"the header says the method retrieves nothing (corpus.retrieves=false) but {retrieving} sample(s) "
            "record retrieval"
        )
    if isinstance(record, dict) and isinstance(record.get("size"), int) and run.spec.full_corpus_size:
        measured = _status_by_size(record, run.spec.full_corpus_size)
        if record.get("status") not in (None, measured):
            problems.add(
                f"the header says the corpus is {record.get('status')!r} but it records {record['size']:,} "
                f"provisions: {measured} (the full pool has {run.spec.full_corpus_size:,})"
            )
    if why := registered_mismatch(run.spec, record):
        problems.add(why)
    unverified_replay = declared if manifest is None else None
    return Evidence(released, retrieving, predicting, manifest is not None, unverified_replay)


def registered_mismatch(spec: BenchmarkSpec, record: Any) -> str | None:
    """A recorded size or status that contradicts the registered corpus of the recorded fingerprint."""
    known = spec.corpus_fingerprints.get(str(record.get("fingerprint"))) if isinstance(record, dict) else None
    if known is None or (record.get("size") == known.size and record.get("status") in (None, known.status)):
        return None
    return (
        f"the header records a corpus of {record.get('size')!r} provisions (status {record.get('status')!r}) "
        f"but its fingerprint is that of the registered {known.status} corpus of {known.size:,} provisions"
    )


def _status_by_size(record: dict[str, Any], full_size: int) -> str:
    """Full or partial by the recorded size; an article-level pool (no paragraph count) is full only when it
    is the hub dataset."""
    if record.get("level") == "article" or record.get("full_size", full_size) is None:
        return "full" if str(record.get("source") or "").startswith("hf:") else "unknown"
    return "partial" if int(record["size"]) < full_size else "full"


@dataclass(frozen=True)
class Placement:
    board_key: str
    board_label: str
    corpus_status: str  # "full" | "partial" | "unknown" | "unregistered"
    corpus: dict[str, Any]


UNREGISTERED = "unregistered"


def by_fingerprint(spec: BenchmarkSpec, record: Any) -> tuple[str, dict[str, Any]]:
    """The corpus a run recorded, judged by its fingerprint alone: a registered one is what the spec says it
    is (status and size from the spec); any other is an unregistered corpus with a board of its own; a log
    that records none is an unknown corpus. The recorded size and status never decide."""
    record = record if isinstance(record, dict) else {}
    fingerprint = record.get("fingerprint")
    if not isinstance(fingerprint, str) or not fingerprint:
        return "unknown", {"kind": "no corpus fingerprint recorded by the run"}
    known = spec.corpus_fingerprints.get(fingerprint)
    if known is not None:
        return known.status, {
            "kind": f"registered corpus: {known.description}",
            "size": known.size,
            "fingerprint": fingerprint,
        }
    size = record.get("size")
    return UNREGISTERED, {
        "kind": "unregistered corpus (its fingerprint is none the benchmark knows)",
        "source": str(record.get("source") or ""),
        "size": size if isinstance(size, int) and not isinstance(size, bool) else None,
        "fingerprint": fingerprint,
    }


def corpus_of(run: RunIdentity, evidence: Evidence) -> tuple[str, dict[str, Any]]:
    """Corpus completeness and its description.

    Released predictions (by their outputs) were produced on the paper's full pool: nothing of ours was
    retrieved, so their `retrieval` metadata (the task default) is not used; they count as full. A run whose
    samples record neither retrieval nor predicted provisions is closed book: its scores are the same whatever
    pool was configured, so it is ranked with the full-corpus runs; provisions predicted without any recorded
    retrieval are an unknown corpus. Any other run is placed by the corpus fingerprint it recorded
    (`by_fingerprint`). A benchmark whose scores do not depend on a corpus counts as full.
    """
    if run.spec.full_corpus_size is None:
        return "full", {"kind": "not applicable: scores do not depend on a statute corpus"}
    if evidence.released is not None:
        return "full", {
            "kind": f"released predictions of {evidence.released} (the paper's full corpus; no retrieval re-run)",
            "size": run.spec.full_corpus_size,
        }
    if evidence.closed_book:
        return "full", {"kind": "not applicable: no sample records retrieval or provisions (closed book)"}
    if evidence.known and not evidence.retrieving:
        return "unknown", {"kind": "provisions predicted without any recorded retrieval"}
    return by_fingerprint(run.spec, run.metadata.get("corpus"))


def corpus_label(status: str, corpus: dict[str, Any]) -> tuple[str, str]:
    """The board key part and label of a corpus: an unregistered one is named by its size and fingerprint."""
    if status != UNREGISTERED:
        return f"corpus={status}", f"{status} corpus"
    fingerprint, size = str(corpus.get("fingerprint")), corpus.get("size")
    sized = f"{size:,} provisions" if isinstance(size, int) else "size not recorded"
    return f"corpus={UNREGISTERED}:{fingerprint}", f"unregistered corpus ({sized}, {fingerprint[:12]})"


def place(run: RunIdentity, coverage: Coverage, task_args: dict[str, Any], evidence: Evidence) -> Placement:
    spec, meta = run.spec, run.metadata
    corpus_status, corpus = corpus_of(run, evidence)
    variants = [f"{label}={meta.get(key)}" for key, label in spec.variants.items()]
    lang = task_args.get("lang") or (meta.get("retrieval") or {}).get("lang") or "ko"
    corpus_key, corpus_text = corpus_label(corpus_status, corpus)
    key_parts = [spec.name, f"lang={lang}", f"dataset={run.fingerprint}", corpus_key, *variants]
    # a benchmark without a statute pool (LEGIT) is not described by one (the key keeps its corpus part)
    pool = [corpus_text] if spec.full_corpus_size is not None else []
    label = " · ".join([spec.name, str(lang), *pool, *variants])
    if unverified_dataset(spec, run.fingerprint):
        label += f" · {UNVERIFIED}"
    if evidence.unverified_replay:
        key_parts.append("outputs=unverified-replay")
        label += f" · {UNVERIFIED_REPLAY}"
    if coverage.subset:
        ids_hash = ids_sha256(coverage.sample_ids)[:12]
        key_parts.append(f"subset={ids_hash}")
        of = max(run.dataset_size or 0, run.spec.official_size or 0)  # a forged, lowered size is not the base
        label += f" · SUBSET {len(coverage.sample_ids)}/{of} ({', '.join(coverage.subset_why)})"
    return Placement(" | ".join(key_parts), label, corpus_status, corpus)
