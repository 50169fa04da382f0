"""The statute corpus: loaded from the Hugging Face hub or a local JSONL, validated, fingerprinted.

A corpus is paragraph-level (the Korean statute dataset) or article-level (the English one): `rows.py` says
how each schema's row becomes a provision and why an article's identity is its article key. The level and the
language of the text are part of `describe()`; an article corpus' fingerprint covers its keys as well.

A local file is parsed once into a provision table (`table.py`) kept in the cache, keyed by the file's path,
size, modification and change times and inode, and verified on every load by the file's SHA-256 besides the
table's own hashes: a file that changed in any way is parsed again, never served from a stale parse. Later
runs memory-map the table and decode only the provisions they return.
"""

import hashlib
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from koblex_tasks.corpus.cache import SkipCache, cache_key, file_sha256, open_cached, read_manifest
from koblex_tasks.corpus.provision import ARTICLE, LEVELS, PARAGRAPH, Level, Provision, provision_text
from koblex_tasks.corpus.rows import LANG_SUFFIX, data_error, read_row, text_language
from koblex_tasks.corpus.table import ProvisionTable, TableBuilder
from koblex_tasks.jsonl import not_a_file

logger = logging.getLogger(__name__)

STATUTE_HF_REPOS = {"ko": "JihyungL/KoBLEX-statute", "en": "JihyungL/KoBLEX-statute-eng"}
STATUTE_HF_SPLIT = "corpus"
# No immutable revision of the statute datasets is known yet: None means "main", and the label records it.
STATUTE_HF_REVISION: str | None = None
FULL_CORPUS_SIZE = 233_544  # paragraphs of the Korean pool; the English pool's article count is not known
# Of the cached provision table, per language; bump when parsing changes what a row becomes (lang=en: 2 since
# article rows are read and `_eng` paragraph fields win over Korean ones).
CORPUS_FORMATS = {"ko": 1, "en": 2}
_SHOWN_DUPLICATES = 3
_LANGUAGE_SAMPLE = 64  # provisions, evenly spaced, whose text says which language the corpus is in
_ARTICLE_FINGERPRINT = b"article\x00"  # begins an article corpus' fingerprint; a paragraph one has no prefix


class StatuteCorpus:
    """All provisions in file order, with a fingerprint that changes whenever any provision text does.

    The provisions live in a `ProvisionTable`; retrieval asks for single provisions (`provision(i)`) and for
    the texts to index (`texts()`), served without making every Provision (`provisions`, a tuple of all of
    them, is made on first use).
    `duplicates_dropped` counts rows left out because an earlier row had the same text. `level` is
    "paragraph" or "article" (all provisions have one); `language` is read from the text.
    """

    def __init__(
        self, table: ProvisionTable, source: str, fingerprint: str = "", duplicates_dropped: int = 0
    ) -> None:
        self._table = table
        self.source = source
        self.fingerprint = fingerprint
        self.duplicates_dropped = duplicates_dropped
        self.level: Level = table.level

    @cached_property
    def provisions(self) -> tuple[Provision, ...]:
        return tuple(self._table)

    def provision(self, i: int) -> Provision:
        return self._table[i]

    def texts(self) -> list[str]:
        """`Provision.text` of every provision, in order (what the indexes are built from)."""
        return list(self.iter_texts())

    def iter_texts(self) -> Iterator[str]:
        """The texts one at a time, decoded as they are consumed (a build need not hold them all)."""
        return self._table.iter_texts()

    @cached_property
    def language(self) -> str | None:
        """The language of the text, "ko" or "en", by the script of an even sample of the provisions (None
        when they hold no letters); a few hundred are decoded, on first use."""
        step = max(1, len(self) // _LANGUAGE_SAMPLE)
        return text_language(self.provision(i).text for i in range(0, len(self), step))

    def __len__(self) -> int:
        return len(self._table)

    @property
    def is_partial(self) -> bool | None:
        """True when the pool is smaller than the paper's 233,544 paragraphs (e.g. the shared 5,423-row file);
        None for an article corpus, whose full size is not known."""
        return len(self) < FULL_CORPUS_SIZE if self.level == PARAGRAPH else None

    def describe(self) -> dict[str, object]:
        return {
            "source": self.source,
            "size": len(self),
            "fingerprint": self.fingerprint,
            "partial": self.is_partial,
            "duplicates_dropped": self.duplicates_dropped,
            "level": self.level,
            "language": self.language,
        }


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    from koblex_tasks.jsonl import read_jsonl  # parsing only (it imports `koblex_tasks.errors`)

    return read_jsonl(path)


def _fingerprint_entry(key: str, text: bytes, level: Level) -> bytes:
    """A provision's part of the fingerprint: its text and a NUL; an article's key besides (its identity)."""
    return key.encode() + b"\x1f" + text + b"\x00" if level == ARTICLE else text + b"\x00"


def fingerprint_provisions(provisions: Iterable[Provision]) -> str:
    """SHA-256 of every provision's text followed by a NUL byte, in order (an article corpus: after a prefix,
    each article's key, a unit separator, its text, a NUL), over one joined buffer."""
    listed = list(provisions)
    article = bool(listed) and listed[0].level == ARTICLE
    joined = b"".join(_fingerprint_entry(p.key, p.text.encode(), p.level) for p in listed)
    return hashlib.sha256((_ARTICLE_FINGERPRINT if article else b"") + joined).hexdigest()


# How a row becomes (id or article key, hierarchy or heading, content, level); `rows.read_row` by default.
RowReader = Callable[[dict[str, Any], int, str, str], tuple[str, str, str, Level]]


@dataclass(frozen=True)
class ParsedCorpus:
    """A parse's result: the kept provisions, the fingerprint of all rows, and the duplicates left out."""

    table: ProvisionTable
    fingerprint: str
    duplicates: int
    examples: list[str]  # the first few: "line 9 (id 'b') repeats line 2 (id 'a')"

    @property
    def level(self) -> Level:
        return self.table.level

    def corpus(self, source: str) -> StatuteCorpus:
        return StatuteCorpus(self.table, source, self.fingerprint, duplicates_dropped=self.duplicates)

    def warn(self, source: str) -> None:
        """One warning for all left-out duplicates, naming how many and the first few."""
        if self.duplicates:
            logger.warning(
                "%s: %d provision(s) repeat an earlier provision's text (%s) under another id and "
                "are left out of the pool: %s%s",
                source,
                self.duplicates,
                "heading + body" if self.level == ARTICLE else "hierarchy + content",
                "; ".join(self.examples),
                "; ..." if self.duplicates > len(self.examples) else "",
            )


def parse_rows(
    rows: Iterable[tuple[int, dict[str, Any]]], source: str, lang: str, reader: RowReader = read_row
) -> ParsedCorpus:
    """Validate rows into a table of one level (the first row's). Ids, and so article keys, must be unique;
    a row repeating an earlier row's text under another id is left out (it would take a second top-k slot
    with the same text) and reported in one warning, so within a corpus a text names one identity."""
    builder: TableBuilder | None = None
    digest = hashlib.sha256()
    seen_ids: dict[str, int] = {}
    by_text: dict[int, list[int]] = {}  # hash(text) -> table positions, confirmed by comparing the text
    lines: list[int] = []
    duplicates = 0
    examples: list[str] = []
    for number, row in rows:
        row_id, hierarchy, content, level = reader(row, number, source, lang)
        if builder is None:
            builder = TableBuilder(level)
            digest.update(_ARTICLE_FINGERPRINT if level == ARTICLE else b"")
        elif level != builder.level:
            raise data_error(
                source,
                number,
                f"the row has the {level} schema, but the corpus is {builder.level}-level (line {lines[0]}): "
                "a corpus is all paragraphs or all articles",
            )
        if level == ARTICLE or "id" in row:
            if row_id in seen_ids:
                what = "article key" if level == ARTICLE else "id"
                raise data_error(
                    source, number, f"duplicate {what} {row_id!r} (first seen at line {seen_ids[row_id]})"
                )
            seen_ids[row_id] = number
        text = provision_text(hierarchy, content, level).encode()
        digest.update(_fingerprint_entry(row_id, text, level))  # the fingerprint covers every row
        same = by_text.setdefault(hash(text), [])
        first = next((i for i in same if builder.text_bytes(i) == text), None)
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
    if builder is None:
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
    key = cache_key({"statutes": identity, "lang": lang, "format": CORPUS_FORMATS[lang]})
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
        level = manifest.get("level", PARAGRAPH)  # entries written before article corpora hold paragraphs
        if not (isinstance(fingerprint, str) and isinstance(duplicates, int) and isinstance(examples, list)):
            raise ValueError("manifest without fingerprint or duplicates")
        if level not in LEVELS:
            raise ValueError(f"manifest with an unknown level {level!r}")
        return ParsedCorpus(ProvisionTable.load(entry, level), fingerprint, duplicates, examples)

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
            "level": p.level,
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
    if lang not in LANG_SUFFIX:
        raise ValueError(f"lang must be one of {sorted(LANG_SUFFIX)}, got {lang!r}")
    if corpus is not None:
        path = Path(corpus)
        problem = not_a_file(path)
        if problem:
            raise data_error(str(path), None, problem)
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
    "CORPUS_FORMATS",
    "FULL_CORPUS_SIZE",
    "STATUTE_HF_REPOS",
    "STATUTE_HF_REVISION",
    "ParsedCorpus",
    "StatuteCorpus",
    "data_error",
    "fingerprint_provisions",
    "load_statutes",
    "parse_rows",
]
