"""The statute corpus: loaded from the Hugging Face hub or a local JSONL, validated, fingerprinted.

A local file is parsed once into a provision table (`table.py`) kept in the cache, keyed by the file's path,
size, modification and change times and inode, and verified on every load by the file's SHA-256 besides the
table's own hashes: a file that changed in any way is parsed again, never served from a stale parse. Later
runs memory-map the table and decode only the provisions they return.
"""

import hashlib
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from koblex_tasks.corpus.cache import SkipCache, cache_key, file_sha256, open_cached, read_manifest
from koblex_tasks.corpus.provision import Provision
from koblex_tasks.corpus.table import ProvisionTable, TableBuilder, table_of

logger = logging.getLogger(__name__)

STATUTE_HF_REPOS = {"ko": "JihyungL/KoBLEX-statute", "en": "JihyungL/KoBLEX-statute-eng"}
STATUTE_HF_SPLIT = "corpus"
# No immutable revision of the statute datasets is known yet: None means "main", and the label records it.
STATUTE_HF_REVISION: str | None = None
FULL_CORPUS_SIZE = 233_544
CORPUS_FORMAT = 1  # of the cached provision table; bump when parsing changes what a row becomes
_SHOWN_DUPLICATES = 3


class StatuteCorpus:
    """All provisions in file order, with a fingerprint that changes whenever any provision text does.

    `provisions` is a tuple, made on first use; retrieval asks for single provisions (`provision(i)`) and
    for the keys to index (`keys()`), which a table-backed corpus serves without making every Provision.
    `duplicates_dropped` counts rows left out because an earlier row had the same hierarchy + content.
    """

    def __init__(
        self,
        provisions: Sequence[Provision],
        source: str,
        fingerprint: str = "",
        duplicates_dropped: int = 0,
    ) -> None:
        self._table = provisions if isinstance(provisions, ProvisionTable) else None
        self._provisions = None if self._table is not None else tuple(provisions)
        self.source = source
        self.fingerprint = fingerprint
        self.duplicates_dropped = duplicates_dropped

    @property
    def provisions(self) -> tuple[Provision, ...]:
        if self._provisions is None:
            self._provisions = tuple(self._table or ())
        return self._provisions

    def provision(self, i: int) -> Provision:
        return self._table[i] if self._table is not None else self.provisions[i]

    def keys(self) -> list[str]:
        """`hierarchy + content` of every provision, in order (what the indexes are built from)."""
        return list(self.iter_keys())

    def iter_keys(self) -> Iterator[str]:
        """The keys one at a time, decoded as they are consumed (a build need not hold them all)."""
        if self._table is not None:
            return self._table.iter_keys()
        return (p.key for p in self.provisions)

    def __len__(self) -> int:
        return len(self._table) if self._table is not None else len(self.provisions)

    @property
    def is_partial(self) -> bool:
        """True when the pool is smaller than the paper's 233,544 paragraphs (e.g. the shared 5,423-row file)."""
        return len(self) < FULL_CORPUS_SIZE

    def describe(self) -> dict[str, object]:
        return {
            "source": self.source,
            "size": len(self),
            "fingerprint": self.fingerprint,
            "partial": self.is_partial,
            "duplicates_dropped": self.duplicates_dropped,
        }


def data_error(source: str, line: int | None, problem: str) -> Exception:
    """A `DataError`, imported only when one is raised: `koblex_tasks.errors` imports Inspect (a second of a
    warm start that never needs it)."""
    from koblex_tasks.errors import DataError

    return DataError(source, line, problem)


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    from koblex_tasks.jsonl import read_jsonl  # parsing only (it imports `koblex_tasks.errors`)

    return read_jsonl(path)


def fingerprint_provisions(provisions: Iterable[Provision]) -> str:
    """SHA-256 of every provision key followed by a NUL byte, in order (one pass over one joined buffer)."""
    joined = "".join(f"{p.hierarchy}{p.content}\x00" for p in provisions)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def _row_id(row: dict[str, Any], number: int, source: str) -> str:
    row_id = row.get("id")
    if row_id is None:
        return str(number)
    if isinstance(row_id, bool | list | dict):  # `true` would become the id "True", a list its repr
        raise data_error(source, number, f"field 'id' must be a string or a number, got {row_id!r}")
    return str(row_id)


def korean_row(row: dict[str, Any], number: int, source: str, lang: str) -> tuple[str, str, str]:
    """(id, hierarchy, content) of a statute row; English rows may name the fields `*_eng`."""
    hierarchy, content = row.get("hierarchy"), row.get("content")
    if type(hierarchy) is not str or type(content) is not str:  # the common case is checked cheaply
        suffix = "_eng" if lang == "en" and "hierarchy" not in row else ""
        hierarchy, content = row.get(f"hierarchy{suffix}"), row.get(f"content{suffix}")
        for name, value in ((f"hierarchy{suffix}", hierarchy), (f"content{suffix}", content)):
            if value is None:
                raise data_error(source, number, f"missing field '{name}'")
            if not isinstance(value, str):
                raise data_error(source, number, f"field '{name}' must be a string")
        assert isinstance(hierarchy, str) and isinstance(content, str)  # checked just above
    return _row_id(row, number, source), hierarchy, content


# How a row becomes (id, hierarchy, content); another corpus layout (e.g. article-level English) adds its own.
RowReader = Callable[[dict[str, Any], int, str, str], tuple[str, str, str]]


@dataclass(frozen=True)
class ParsedCorpus:
    """A parse's result: the kept provisions, the fingerprint of all rows, and the duplicates left out."""

    table: ProvisionTable
    fingerprint: str
    duplicates: int
    examples: list[str]  # the first few: "line 9 (id 'b') repeats line 2 (id 'a')"

    def corpus(self, source: str) -> StatuteCorpus:
        return StatuteCorpus(self.table, source, self.fingerprint, duplicates_dropped=self.duplicates)

    def warn(self, source: str) -> None:
        """One warning for all left-out duplicates, naming how many and the first few."""
        if self.duplicates:
            logger.warning(
                "%s: %d provision(s) repeat an earlier provision's hierarchy + content under another id and "
                "are left out of the pool: %s%s",
                source,
                self.duplicates,
                "; ".join(self.examples),
                "; ..." if self.duplicates > len(self.examples) else "",
            )


def parse_rows(
    rows: Iterable[tuple[int, dict[str, Any]]], source: str, lang: str, read_row: RowReader = korean_row
) -> ParsedCorpus:
    """Validate rows into a table. Ids must be unique; a row repeating an earlier row's text under another id
    is left out (it would take a second top-k slot with the same text) and reported in one warning."""
    builder = TableBuilder()
    digest = hashlib.sha256()
    seen_ids: dict[str, int] = {}
    by_text: dict[int, list[int]] = {}  # hash(key) -> table positions, confirmed by comparing the text
    lines: list[int] = []
    duplicates = 0
    examples: list[str] = []
    for number, row in rows:
        row_id, hierarchy, content = read_row(row, number, source, lang)
        if "id" in row:
            if row_id in seen_ids:
                raise data_error(
                    source, number, f"duplicate id {row_id!r} (first seen at line {seen_ids[row_id]})"
                )
            seen_ids[row_id] = number
        key = (hierarchy + content).encode()
        digest.update(key + b"\x00")  # the fingerprint covers every row, as it always has
        same = by_text.setdefault(hash(key), [])
        first = next((i for i in same if builder.key_bytes(i) == key), None)
        if first is not None:
            duplicates += 1
            if len(examples) < _SHOWN_DUPLICATES:
                examples.append(
                    f"line {number} (id {row_id!r}) repeats line {lines[first]} (id {builder.row_id(first)!r})"
                )
            continue
        same.append(len(builder))
        lines.append(number)
        builder.add(row_id, hierarchy, content)
    if not len(builder):
        raise data_error(source, None, "the statute corpus is empty")
    return ParsedCorpus(builder.table(), digest.hexdigest(), duplicates, examples)


def _file_identity(path: Path) -> dict[str, object]:
    """What changes whenever the file does (a write always updates the change time); the SHA-256 is checked
    on load besides."""
    st = path.stat()
    return {
        "path": str(path.resolve()),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
        "inode": st.st_ino,
    }


def _parse_file(path: Path, lang: str) -> tuple[ParsedCorpus, str]:
    """Parse the JSONL while another thread hashes the file (hashlib releases the GIL)."""
    sha: list[str] = []
    hasher = threading.Thread(target=lambda: sha.append(file_sha256(path)), name="koblex-corpus-sha")
    hasher.start()
    try:
        parsed = parse_rows(_read_jsonl(path), str(path), lang)
    finally:
        hasher.join()
    return parsed, sha[0]


def _load_cached(path: Path, lang: str, cache_dir: Path | None) -> StatuteCorpus:
    source = str(path)
    identity = _file_identity(path)
    key = cache_key({"statutes": identity, "lang": lang, "format": CORPUS_FORMAT})
    built: dict[str, object] = {}

    def build() -> ParsedCorpus:
        parsed, sha = _parse_file(path, lang)
        built["sha"] = sha
        built["unchanged"] = _file_identity(path) == identity  # not edited while it was parsed
        return parsed

    def load(entry: Path) -> ParsedCorpus:
        manifest = read_manifest(entry, key) or {}
        fingerprint, duplicates, examples = (
            manifest.get(f) for f in ("fingerprint", "duplicates", "examples")
        )
        if not (isinstance(fingerprint, str) and isinstance(duplicates, int) and isinstance(examples, list)):
            raise ValueError("manifest without fingerprint or duplicates")
        return ParsedCorpus(ProvisionTable.load(entry), fingerprint, duplicates, examples)

    def save(parsed: ParsedCorpus, directory: Path) -> None:
        if not built.get("unchanged"):
            raise SkipCache(f"{source} changed while it was parsed")
        parsed.table.save(directory)

    parsed, _ = open_cached(
        "statutes",
        key,
        load=load,
        build=build,
        save=save,
        extra=lambda p: {
            "external": {"source": built["sha"]},
            "source": source,
            "fingerprint": p.fingerprint,
            "size": len(p.table),
            "duplicates": p.duplicates,
            "examples": p.examples,
        },
        external={"source": path},
        cache_dir=cache_dir,
        label="statute corpus",
    )
    parsed.warn(source)
    return parsed.corpus(source)


def load_statutes(
    corpus: str | None = None,
    lang: str = "ko",
    revision: str | None = STATUTE_HF_REVISION,
    cache_dir: Path | None = None,
    use_cache: bool = True,
) -> StatuteCorpus:
    """Load the statute pool: a local JSONL path (its parse cached), or (None) the Hugging Face dataset."""
    if corpus is not None:
        path = Path(corpus)
        if not path.is_file():
            raise data_error(str(path), None, "file not found")
        if use_cache:
            return _load_cached(path, lang, cache_dir)
        parsed = parse_rows(_read_jsonl(path), str(path), lang)
        source = str(path)
    else:
        from koblex_tasks.hub import load_hub_rows  # only here: a local-file run imports nothing of the hub's

        rows, source = load_hub_rows(STATUTE_HF_REPOS[lang], STATUTE_HF_SPLIT, revision)
        parsed = parse_rows(enumerate(rows, start=1), source, lang)
    parsed.warn(source)
    return parsed.corpus(source)


__all__ = [
    "FULL_CORPUS_SIZE",
    "STATUTE_HF_REPOS",
    "STATUTE_HF_REVISION",
    "ParsedCorpus",
    "StatuteCorpus",
    "fingerprint_provisions",
    "load_statutes",
    "parse_rows",
    "table_of",
]
