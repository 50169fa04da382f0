"""Readable board titles from the benchmark spec and a board's facts; the stored board key stays the identifier.

A board key (written by `placement.place`, stored in databases, never changed here) reads
``koblex | lang=ko | dataset=<sha256> | corpus=partial | official scoring=True [| subset=<hash>]``. The title
says the same for a reader: ``KoBLEX — Korean, 226 items, partial corpus (5,423 of 233,544 paragraphs),
official scoring``. A benchmark whose spec has no retrieval corpus (`full_corpus_size is None`, e.g. LEGIT) gets
no corpus wording. Keys of another shape (tests, benchmarks) still get the spec's title and item count.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from koblex_tasks.logs.placement import UNVERIFIED, unverified_dataset
from koblex_tasks.spec import BenchmarkSpec

SEPARATOR = " | "
# ISO 639-1 codes the benchmarks use; an unknown code is shown as is.
LANGUAGES: Mapping[str, str] = {"ko": "Korean", "en": "English"}


def key_facts(key: str) -> dict[str, str]:
    """The ``name=value`` parts of a board key after the benchmark name (empty for keys of another shape)."""
    facts: dict[str, str] = {}
    for part in key.split(SEPARATOR)[1:]:
        name, sep, value = part.partition("=")
        if sep:
            facts[name] = value
    return facts


def variant_phrase(label: str, value: str) -> str:
    """A scoring variant as words: a switch by its label ("official scoring" / "… off"), else "paper rule"."""
    if value == "True":
        return label
    if value == "False":
        return f"{label} off"
    return f"{value} {label}"


def _count(n: int) -> str:
    return f"{n:,}"


CLOSED_BOOK = "closed book (no corpus read)"


def closed_book(provenances: Sequence[Mapping[str, Any]]) -> bool:
    """Did every run retrieve nothing? (placement files them as full-corpus runs, which they are comparable
    with; a board of such runs alone must not claim a corpus)."""
    kinds = [str((p.get("corpus") or {}).get("kind", "")) for p in provenances]
    return bool(kinds) and all("closed book" in kind for kind in kinds)


def corpus_phrase(
    spec: BenchmarkSpec, status: str, sizes: Sequence[int], provenances: Sequence[Mapping[str, Any]] = ()
) -> str | None:
    """Corpus completeness with the local pool's size against the spec's full pool; None without a corpus."""
    full = spec.full_corpus_size
    if full is None:
        return None
    if closed_book(provenances):
        return CLOSED_BOOK
    if status == "full":
        return "full corpus"
    if status == "unregistered":
        fingerprints = sorted({str((p.get("corpus") or {}).get("fingerprint", ""))[:12] for p in provenances})
        sized = f"{_count(sizes[0])} provisions, " if len(set(sizes)) == 1 else ""
        return f"unregistered corpus ({sized}fingerprint {', '.join(fingerprints) or '?'})"
    if status != "partial":
        return "corpus completeness unknown"
    if not sizes:
        return "partial corpus"
    low, high = min(sizes), max(sizes)
    span = _count(low) if low == high else f"{_count(low)}–{_count(high)}"
    return f"partial corpus ({span} of {_count(full)} paragraphs)"


def _dataset_size(spec: BenchmarkSpec, provenances: Sequence[Mapping[str, Any]]) -> int | None:
    """What a subset is a subset of: the official split (as placement's label says: "SUBSET 6/300"), else the
    largest dataset a run recorded (a run's own size is often the filtered one)."""
    if spec.official_size:
        return spec.official_size
    sizes = [int(s) for p in provenances if isinstance(s := (p.get("dataset") or {}).get("size"), int)]
    return max(sizes) if sizes else None


def _file_name(value: str) -> str:
    """A file argument by its name alone: the submitter's folders (``../shared/data/...``) are not the board's."""
    return value.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or value


def _subset_why(spec: BenchmarkSpec, provenances: Sequence[Mapping[str, Any]]) -> str:
    """The task arguments that selected the subset (``hops=1``, ``verdicts=<file name>``), as the runs
    recorded them; a file argument (`filter_args`) by its file name, never its local path."""
    args: dict[str, str] = {}
    for p in provenances:
        task_args = p.get("task_args") or {}
        for name in (*spec.subset_args, *spec.filter_args):
            if task_args.get(name) is not None:
                value = str(task_args[name])
                args.setdefault(name, _file_name(value) if name in spec.filter_args else value)
    return ", ".join(f"{k}={v}" for k, v in args.items())


def items_phrase(
    spec: BenchmarkSpec, n_items: int, subset: bool, provenances: Sequence[Mapping[str, Any]]
) -> str:
    """``226 items``, or for a subset board ``55 of 226 items (subset: hops=1)``."""
    if not subset:
        return f"{_count(n_items)} items"
    size = _dataset_size(spec, provenances)
    of = f" of {_count(size)}" if size and size != n_items else ""
    why = _subset_why(spec, provenances)
    return f"{_count(n_items)}{of} items (subset{': ' + why if why else ''})"


def corpus_sizes(provenances: Sequence[Mapping[str, Any]]) -> list[int]:
    """The paragraph counts of the local corpora the runs retrieved from (as measured at submission)."""
    return [int(s) for p in provenances if isinstance(s := (p.get("corpus") or {}).get("size"), int)]


def board_title(
    spec: BenchmarkSpec,
    key: str,
    corpus_status: str,
    n_items: int,
    subset: bool,
    provenances: Sequence[Mapping[str, Any]],
) -> str:
    """``<spec title> — <language>, <items>, <corpus>, <variants>`` from what the key and the runs record."""
    facts = key_facts(key)
    parts = []
    if lang := facts.get("lang"):
        parts.append(LANGUAGES.get(lang, lang))
    parts.append(items_phrase(spec, n_items, subset, provenances))
    if corpus := corpus_phrase(spec, corpus_status, corpus_sizes(provenances), provenances):
        parts.append(corpus)
    parts += [variant_phrase(label, facts[label]) for label in spec.variants.values() if label in facts]
    if unverified_dataset(spec, facts.get("dataset")):
        parts.append(UNVERIFIED)
    return f"{spec.title} — {', '.join(parts)}"


def dataset_note(spec: BenchmarkSpec, key: str) -> str | None:
    """What the board's dataset is: the spec's description of a known fingerprint, else the fingerprint."""
    fingerprint = key_facts(key).get("dataset")
    if not fingerprint:
        return None
    known = spec.dataset_fingerprints.get(fingerprint)
    return known or f"fingerprint {fingerprint[:12]}… (not a registered official dataset)"


def _short_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]


def distinct_titles(titles: Sequence[str], keys: Sequence[str]) -> list[str]:
    """Titles made unique: boards that read alike get their dataset's short fingerprint, then the key's hash."""
    out = list(titles)
    for suffix in (
        lambda k: f"dataset {(key_facts(k).get('dataset') or k)[:12]}",
        lambda k: f"board {_short_hash(k)}",
    ):
        clashing = {t for t in out if out.count(t) > 1}
        out = [f"{t}, {suffix(k)}" if t in clashing else t for t, k in zip(out, keys, strict=True)]
    return out


def benchmark_notes() -> list[tuple[str, str]]:
    """(title, what it measures) of every registered benchmark whose spec says it, for the page's header."""
    from koblex_tasks.tasks import benchmark_specs

    return [(spec.title, spec.description) for spec in benchmark_specs() if spec.description]


def store_titles(store: Any) -> dict[str, str]:
    """Each stored board's title as the page computes it (items: the union over its runs), so `koblex
    leaderboard list` says what the page and the exports say; a board of an unregistered benchmark is left out."""
    from koblex_tasks.tasks import spec_for_task

    by_board: dict[str, list[Any]] = {}
    for run in store.runs():
        by_board.setdefault(run.board_key, []).append(run)
    keys, found = [], []
    for key, runs in by_board.items():
        spec = spec_for_task(runs[0].benchmark)
        if spec is None:
            continue
        items = set().union(*(store.items(r.run_id) for r in runs))
        first = runs[0]
        provenances = [r.provenance for r in runs]
        found.append(board_title(spec, key, first.corpus_status, len(items), first.subset, provenances))
        keys.append(key)
    return dict(zip(keys, distinct_titles(found, keys), strict=True))
