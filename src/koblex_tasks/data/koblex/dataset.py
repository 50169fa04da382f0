"""KoBLEX questions: loading (hub or local JSONL), validation, and conversion to Inspect samples.

Gold provisions never enter a sample: a solver sees its `TaskState` (input, metadata, target), so anything
there is an answer key. They go to the scorers in a `GoldBook` the task builds from the same records (by
sample id): `provisions`, the gold paragraphs' texts in the question language (the paper's strings, which the
LF-Eval judge reads), and `keys`, the identities the provision metrics compare with the retrieved provisions,
at the level and in the language of the corpus (`GoldIdentity`): for the Korean paragraph corpus the two are
the same strings; for an article-level corpus (the English statute dataset) the keys are the contexts'
article keys `index`, so two gold paragraphs of one article are one gold article.
"""

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from koblex_tasks.corpus.provision import ARTICLE, PARAGRAPH, Level, provision_key
from koblex_tasks.corpus.rows import LANG_SUFFIX
from koblex_tasks.errors import DataError
from koblex_tasks.hub import load_hub_rows
from koblex_tasks.jsonl import not_a_file, read_jsonl

KOBLEX_HF_REPO = "JihyungL/KoBLEX-koblex"
KOBLEX_HF_SPLIT = "test"
# No immutable revision of the hub dataset is known yet; None = "main". The resolved label and a content
# fingerprint go into the log, so a silent upstream change is still detectable.
KOBLEX_HF_REVISION: str | None = None

TEXT_FIELDS = ("question", "answer", "background")


@dataclass(frozen=True)
class KoblexData:
    records: list[dict[str, Any]]
    source: str
    fingerprint: str
    lines: tuple[int, ...] = ()  # each record's line (local file) or row number (hub), for error messages


@dataclass(frozen=True)
class GoldIdentity:
    """How gold contexts become identities of the corpus' provisions: the corpus' level and text language.

    A paragraph is `hierarchy + content` in the corpus' language (normally the questions' own; the Korean
    corpus under English questions keeps Korean identities); an article is the context's `index`, in order,
    each once.
    """

    level: Level = PARAGRAPH
    language: str = "ko"

    def fields(self) -> tuple[str, ...]:
        if self.level == ARTICLE:
            return ("index",)
        suffix = LANG_SUFFIX[self.language]
        return (f"hierarchy{suffix}", f"content{suffix}")

    @property
    def name(self) -> str:
        """`article`, or `paragraph:<language>` (the manifest's name for this kind of gold set)."""
        return ARTICLE if self.level == ARTICLE else f"{PARAGRAPH}:{self.language}"

    def keys(self, record: dict[str, Any]) -> list[str]:
        if self.level == ARTICLE:
            return list(dict.fromkeys(c["index"] for c in record["contexts"]))
        return gold_provisions(record, self.language)

    def _missing(self, record: dict[str, Any]) -> tuple[int, str] | None:
        """The first context (its position and field) that lacks what this identity is made of."""
        for i, ctx in enumerate(record["contexts"]):
            for name in self.fields():
                if not isinstance(ctx.get(name), str) or (self.level == ARTICLE and not ctx[name].strip()):
                    return i, name
        return None

    def carried_by(self, record: dict[str, Any]) -> bool:
        """Every context of `record` carries what this identity is made of."""
        return self._missing(record) is None

    def check(self, record: dict[str, Any], source: str, line: int | None) -> None:
        """Every context carries what this identity is made of (a `DataError` naming the line if not)."""
        missing = self._missing(record)
        if missing is not None:
            i, name = missing
            what = "the article key" if self.level == ARTICLE else f"a {self.language} paragraph's identity"
            raise DataError(
                source,
                line,
                f"question {record['id']!r}: contexts[{i}] lacks a string '{name}' ({what}, which "
                f"a {self.level}-level corpus is scored by)",
            )


def _validate(record: dict[str, Any], source: str, line: int, lang: str) -> None:
    suffix = LANG_SUFFIX[lang]
    if not isinstance(record.get("id"), str) or not record["id"]:
        raise DataError(source, line, "missing or empty field 'id'")
    for name in TEXT_FIELDS:
        key = name + suffix
        if key not in record:
            raise DataError(source, line, f"missing field '{key}'")
        if not isinstance(record[key], str):
            raise DataError(source, line, f"field '{key}' must be a string")
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
) -> KoblexData:
    """Read and validate the questions; duplicate ids are an error naming both lines."""
    if lang not in LANG_SUFFIX:
        raise ValueError(f"lang must be one of {sorted(LANG_SUFFIX)}, got {lang!r}")
    if data is not None:
        source = str(Path(data))
        problem = not_a_file(data, "questions file")
        if problem:
            raise DataError(source, None, problem)
        numbered = list(read_jsonl(source))
    else:
        rows, source = load_hub_rows(KOBLEX_HF_REPO, KOBLEX_HF_SPLIT, revision)
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
    lines = tuple(line for line, _ in numbered)
    return KoblexData(records=records, source=source, fingerprint=fingerprint_records(records), lines=lines)


def hop_counts(records: list[dict[str, Any]]) -> list[int]:
    """The distinct numbers of gold provisions in the data (the `hops` a run can select), ascending."""
    return sorted({len(r["contexts"]) for r in records})


def gold_provisions(record: dict[str, Any], lang: str) -> list[str]:
    """The gold paragraphs' `hierarchy + content` in `lang`, one per context (the paper's strings)."""
    suffix = LANG_SUFFIX[lang]
    return [provision_key(c["hierarchy" + suffix], c["content" + suffix]) for c in record["contexts"]]


def sample_input(record: dict[str, Any], lang: str) -> str:
    """The sample's input: background + question (what the reference manifest hashes)."""
    suffix = LANG_SUFFIX[lang]
    question_label = "Question" if lang == "en" else "질문"
    return f"{record['background' + suffix]}\n\n{question_label}: {record['question' + suffix]}"


def record_to_sample(
    record: dict[str, Any],
    lang: str,
    extra_metadata: dict[str, Any] | None = None,
    identity: GoldIdentity | None = None,
) -> Sample:
    """Input = background + question; target = the reference answer; hops in metadata, never the gold.

    `hop_count` is the number of gold paragraphs (the paper's 55/125/46 split, public as the stratum); the
    file's own `n_hops` disagrees on 6 items and is kept as `n_hops` for reference. `identity` (default:
    paragraphs in `lang`) names the level the provision metrics score at (`provision_level`); `gold_count`
    is how many gold identities there are at that level (a count, not which).
    """
    suffix = LANG_SUFFIX[lang]
    identity = identity or GoldIdentity(PARAGRAPH, lang)
    metadata = {
        "background": record["background" + suffix],
        "question": record["question" + suffix],
        "provision_level": identity.level,
        "hop_count": len(record["contexts"]),
        "gold_count": len(identity.keys(record)),  # public: the paper's one-time retrieval takes k = it
        "n_hops": record.get("n_hops"),
        "lang": lang,
        **(extra_metadata or {}),
    }
    return Sample(
        id=record["id"], input=sample_input(record, lang), target=record["answer" + suffix], metadata=metadata
    )


@dataclass(frozen=True)
class Gold:
    """One item's gold: the identities the provision metrics compare (`keys`, at `identity`) and the
    paragraphs' texts in the question language (`provisions`, what the LF-Eval judge reads)."""

    keys: tuple[str, ...]
    provisions: tuple[str, ...]
    identity: str  # `GoldIdentity.name`


@dataclass(frozen=True)
class GoldBook:
    """Each item's gold by sample id, handed by the task to its scorers (never to a sample or a solver).

    Inspect logs a scorer's arguments by their `name` when they are not plain data, so the log records the
    book's one-line description, not the answer key.
    """

    items: Mapping[str, Gold] = field(default_factory=dict)
    source: str = ""

    @property
    def name(self) -> str:
        kinds = sorted({g.identity for g in self.items.values()})
        return f"gold provisions of {len(self.items)} items ({', '.join(kinds)}) from {self.source}"

    def get(self, sample_id: object) -> Gold | None:
        return self.items.get(str(sample_id))


def gold_book(data: KoblexData, lang: str, identity: GoldIdentity | None = None) -> GoldBook:
    """The gold of every record, for the scorers: keys at `identity` (default paragraphs in `lang`)."""
    identity = identity or GoldIdentity(PARAGRAPH, lang)
    items = {
        str(r["id"]): Gold(tuple(identity.keys(r)), tuple(gold_provisions(r, lang)), identity.name)
        for r in data.records
    }
    return GoldBook(items, data.source)


def check_identity(data: KoblexData, identity: GoldIdentity) -> None:
    """Every record's contexts carry what `identity` is made of (a `DataError` naming the first that lacks it)."""
    lines: tuple[int | None, ...] = data.lines or (None,) * len(data.records)
    for record, line in zip(data.records, lines, strict=True):
        identity.check(record, data.source, line)


def koblex_dataset(
    data: KoblexData,
    lang: str,
    extra_metadata: dict[str, Any] | None = None,
    identity: GoldIdentity | None = None,
) -> MemoryDataset:
    """The samples; with `identity` every record is first checked to carry the fields it needs."""
    if identity is not None:
        check_identity(data, identity)
    samples = [record_to_sample(r, lang, extra_metadata, identity) for r in data.records]
    return MemoryDataset(samples=samples, name="koblex", location=data.source)
