"""The official references a log is judged against, from the manifest the benchmark ships, never from the log.

A benchmark with a known official dataset ships `koblex_tasks/benchmarks/<spec.name>/references.v1.json`
(made by `tools/build_references.py` from the dataset and checked against its fingerprint there):

- ``dataset_fingerprint``: the official dataset it was derived from;
- ``items``: per sample id, one entry per question language: ``input_sha256`` (the sample's input),
  ``target_sha256`` (the reference answer), ``gold_sha256`` (each gold set a scorer may compare with);
- ``output_keys``: the `store` entries that, with the completion, are a run's outputs (what its scores follow
  from); ``retrieval_keys``: the entries that show a solver retrieved; ``prediction_keys``: that it
  predicted provisions;
- ``gold_windows`` (optional, later manifests): per sample id, one entry per gold paragraph (`key`: the
  `containment.digest` of its key, `chars` and `windows`: `containment.windows` of its text), so the event
  rules can tell a gold text in a model input without the manifest holding any text;
- ``released``: per released prediction file, its ``file_sha256`` and ``outputs``, the `output_digests` of
  its replay (one per item, sorted).

A log that claims the manifest's dataset must show, item by item, an input and a reference answer that hash to
the manifest's; the first item that does not is named in the refusal. Each item's entry is then handed to the
scorers' re-derivations (`REFERENCE_PARAM`), which check their own references (a gold set) against it. A
benchmark without a manifest (LEGIT: only a sample of its split is at hand) is judged by the log's own
references, and its boards say the dataset is unverified whenever the spec cannot tell.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from inspect_ai.log import EvalSample

from koblex_tasks.logs.identity import RunIdentity
from koblex_tasks.logs.rejection import Problems
from koblex_tasks.spec import REFERENCE_MANIFEST, text_sha256
from koblex_tasks.text import printable


@dataclass(frozen=True)
class Manifest:
    benchmark: str
    dataset_fingerprint: str
    items: dict[str, list[dict[str, Any]]]
    output_keys: tuple[str, ...] = ()
    retrieval_keys: tuple[str, ...] = ()
    prediction_keys: tuple[str, ...] = ()
    released: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Per sample id, each gold provision's key hash and text window hashes (`containment`); empty in
    # manifests written before them.
    gold_windows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def released_file(self, outputs: set[str]) -> str | None:
        """The released file whose replay holds every one of these item outputs (`output_digests`), if any."""
        if not outputs:
            return None
        return next(
            (name for name, r in self.released.items() if outputs <= set(r.get("outputs") or ())), None
        )


@cache
def manifest_for(benchmark: str) -> Manifest | None:
    """The benchmark's shipped manifest, None when it ships none."""
    try:
        text = (resources.files(f"koblex_tasks.benchmarks.{benchmark}") / REFERENCE_MANIFEST).read_text(
            "utf-8"
        )
    except (ModuleNotFoundError, FileNotFoundError):
        return None
    data = json.loads(text)
    return Manifest(
        benchmark=data["benchmark"],
        dataset_fingerprint=data["dataset_fingerprint"],
        items=data["items"],
        output_keys=tuple(data.get("output_keys") or ()),
        retrieval_keys=tuple(data.get("retrieval_keys") or ()),
        prediction_keys=tuple(data.get("prediction_keys") or ()),
        released=dict(data.get("released") or {}),
        gold_windows=dict(data.get("gold_windows") or {}),
    )


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return None  # chat messages as input: not what a manifest hashes


def _entry(sample: EvalSample, entries: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str]:
    """The manifest entry whose input and target the sample shows, or why none does."""
    given = _text(sample.input)
    by_input = [e for e in entries if given is not None and e["input_sha256"] == text_sha256(given)]
    if not by_input:
        return None, "its input is not the official question"
    target = _text(sample.target)
    found = next(
        (e for e in by_input if target is not None and e["target_sha256"] == text_sha256(target)), None
    )
    return (
        (found, "") if found is not None else (None, "its reference answer (target) is not the official one")
    )


def official_references(
    samples: list[EvalSample], run: RunIdentity, problems: Problems
) -> dict[str, dict[str, Any]] | None:
    """Sample id -> its manifest entry, for a log claiming the manifest's dataset (None: no manifest applies).

    Items whose input or reference answer differ from the official ones are a problem naming the first."""
    manifest = manifest_for(run.spec.name)
    if manifest is None or run.fingerprint != manifest.dataset_fingerprint:
        return None
    found: dict[str, dict[str, Any]] = {}
    differ: list[str] = []
    for sample in sorted(samples, key=lambda s: (str(s.id), int(s.epoch))):
        sid = str(sample.id)
        entry, why = _entry(sample, manifest.items.get(sid) or [])
        if entry is None:
            if not manifest.items.get(sid):
                why = "it is not an official item"
            differ.append(f"{sid!r}: {why}")
        elif sid not in found:
            found[sid] = entry
    if differ:
        problems.add(
            printable(
                f"{len(set(differ))} item(s) differ from the official references ({run.spec.name} {REFERENCE_MANIFEST}), "
                f"first {differ[0]}"
            )
        )
    return found


def output_digests(samples: list[EvalSample], keys: tuple[str, ...]) -> set[str]:
    """What a run produced, one digest per item (epochs collapsed): its id, completion and the `keys` of its
    store (16 hex digits of their SHA-256). Two runs with the same digests have the same outputs."""
    rows = {
        json.dumps(
            [str(s.id), s.output.completion if s.output else "", {k: (s.store or {}).get(k) for k in keys}],
            sort_keys=True,
            ensure_ascii=False,
        )
        for s in samples
    }
    return {text_sha256(row)[:16] for row in rows}
