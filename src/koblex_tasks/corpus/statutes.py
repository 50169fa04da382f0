"""The statute corpus: loaded from the Hugging Face hub or a local JSONL, validated, fingerprinted."""

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from koblex_tasks.corpus.provision import Provision
from koblex_tasks.errors import DataError
from koblex_tasks.hub import load_hub_rows
from koblex_tasks.jsonl import read_jsonl

STATUTE_HF_REPOS = {"ko": "JihyungL/KoBLEX-statute", "en": "JihyungL/KoBLEX-statute-eng"}
STATUTE_HF_SPLIT = "corpus"
# No immutable revision of the statute datasets is known yet: None means "main", and the label records it.
STATUTE_HF_REVISION: str | None = None
FULL_CORPUS_SIZE = 233_544


@dataclass(frozen=True)
class StatuteCorpus:
    """All provisions in file order, with a fingerprint that changes whenever any provision text does."""

    provisions: tuple[Provision, ...]
    source: str
    fingerprint: str = field(default="")

    def __len__(self) -> int:
        return len(self.provisions)

    @property
    def is_partial(self) -> bool:
        """True when the pool is smaller than the paper's 233,544 paragraphs (e.g. the shared 5,423-row file)."""
        return len(self.provisions) < FULL_CORPUS_SIZE

    def describe(self) -> dict[str, object]:
        return {
            "source": self.source,
            "size": len(self.provisions),
            "fingerprint": self.fingerprint,
            "partial": self.is_partial,
        }


def fingerprint_provisions(provisions: tuple[Provision, ...]) -> str:
    """SHA-256 of every provision key followed by a NUL byte, in order (one pass over one joined buffer)."""
    joined = "".join(f"{p.hierarchy}{p.content}\x00" for p in provisions)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def _row_to_provision(row: dict, number: int, source: str, lang: str) -> Provision:
    hierarchy, content = row.get("hierarchy"), row.get("content")
    if type(hierarchy) is str and type(content) is str:  # the common case, checked cheaply
        row_id = row.get("id")
        return Provision(str(row_id) if row_id is not None else str(number), hierarchy, content)
    suffix = "_eng" if lang == "en" and "hierarchy" not in row else ""
    hierarchy, content = row.get(f"hierarchy{suffix}"), row.get(f"content{suffix}")
    for name, value in ((f"hierarchy{suffix}", hierarchy), (f"content{suffix}", content)):
        if value is None:
            raise DataError(source, number, f"missing field '{name}'")
        if not isinstance(value, str):
            raise DataError(source, number, f"field '{name}' must be a string")
    assert isinstance(hierarchy, str) and isinstance(content, str)  # checked just above
    row_id = row.get("id")
    return Provision(
        row_id=str(row_id) if row_id is not None else str(number), hierarchy=hierarchy, content=content
    )


def _build(rows: list[tuple[int, dict]], source: str, lang: str) -> StatuteCorpus:
    provisions: list[Provision] = []
    seen_ids: dict[str, int] = {}
    for number, row in rows:
        provision = _row_to_provision(row, number, source, lang)
        if "id" in row:
            if provision.row_id in seen_ids:
                raise DataError(
                    source,
                    number,
                    f"duplicate id {provision.row_id!r} (first seen at line {seen_ids[provision.row_id]})",
                )
            seen_ids[provision.row_id] = number
        provisions.append(provision)
    if not provisions:
        raise DataError(source, None, "the statute corpus is empty")
    frozen = tuple(provisions)
    return StatuteCorpus(provisions=frozen, source=source, fingerprint=fingerprint_provisions(frozen))


def load_statutes(
    corpus: str | None = None, lang: str = "ko", revision: str | None = STATUTE_HF_REVISION
) -> StatuteCorpus:
    """Load the statute pool: a local JSONL path, or (None) the Hugging Face dataset for `lang`."""
    if corpus is not None:
        path = str(Path(corpus))
        return _build(list(read_jsonl(path)), path, lang)
    rows, label = load_hub_rows(STATUTE_HF_REPOS[lang], STATUTE_HF_SPLIT, revision)
    return _build(list(enumerate(rows, start=1)), label, lang)
