"""Words a tokenizer analysed in earlier builds, kept in the cache so that a rebuild analyses only new words.

Kiwi's analysis is most of a Kiwi index build (about 90 µs of CPU per distinct word; a 250K-paragraph corpus
has about 250K distinct words), and it depends only on the word and the tokenizer's config. The cache entry
`kiwi-words/<key of the config>` maps each word to its content terms; it is verified like every entry and
replaced, merged with the new words, after a build that analysed any. Queries never read it: it is large.

Queries have their own, small entry `kiwi-query-words/<key>`: the words queries had analysed, loaded when an
index is opened and merged with this process' new query words when it exits. A warm start whose query words
are all in it never constructs Kiwi (a second or more).
"""

import atexit
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, runtime_checkable

import orjson

from koblex_tasks.corpus.cache import cache_key, entry_path, verify_entry, write_entry
from koblex_tasks.corpus.tokenizers import WordTerms

logger = logging.getLogger(__name__)

WORDS_FILE = "words.json"
WORDCACHE_FORMAT = 1
MAX_WORDS = 3_000_000  # beyond this the cache restarts from the latest build's new words
MAX_QUERY_WORDS = 200_000  # likewise for the query words


@runtime_checkable
class LearnsWords(Protocol):
    """A tokenizer that consults `known_words` before analysing and reports what it analysed in `new_words`."""

    name: str
    known_words: WordTerms
    new_words: dict[str, tuple[str, ...]]
    query_words: dict[str, tuple[str, ...]]  # what queries had analysed in this process

    def config(self) -> dict[str, object]: ...


def _entry(tokenizer: LearnsWords, cache_dir: Path | None, kind: str = "words") -> tuple[Path, str]:
    key = cache_key({"words": tokenizer.config(), "format": WORDCACHE_FORMAT})
    return entry_path(f"{tokenizer.name}-{kind}", key, cache_dir), key


def load_words(
    tokenizer: LearnsWords, cache_dir: Path | None, kind: str = "words"
) -> dict[str, tuple[str, ...]]:
    """The cached analyses for this tokenizer's config, or none if the entry is missing or fails to verify."""
    entry, key = _entry(tokenizer, cache_dir, kind)
    if not entry.is_dir():
        return {}
    if not verify_entry(entry, key):
        logger.warning("%s word cache %s is stale or corrupted; ignoring it", tokenizer.name, entry)
        return {}
    try:
        words, terms = orjson.loads((entry / WORDS_FILE).read_bytes())
        return dict(zip(words, map(tuple, terms), strict=True))
    except (OSError, ValueError, TypeError) as exc:
        logger.warning("%s word cache %s could not be read (%s); ignoring it", tokenizer.name, entry, exc)
        return {}


def _write(path: Path, blob: bytes) -> None:
    path.write_bytes(blob)


def save_words(
    tokenizer: LearnsWords, cache_dir: Path | None, words: dict[str, tuple[str, ...]], kind: str = "words"
) -> None:
    entry, key = _entry(tokenizer, cache_dir, kind)
    blob = orjson.dumps([list(words), list(words.values())])
    write_entry(
        entry,
        key,
        lambda directory: _write(directory / WORDS_FILE, blob),
        {"words": len(words)},
        f"{tokenizer.name} word cache",
    )


@contextmanager
def remembering_words(tokenizer: object, cache_dir: Path | None, enabled: bool = True) -> Iterator[None]:
    """Around a corpus build: give the tokenizer the cached words, then cache them with the new ones."""
    if not enabled or not isinstance(tokenizer, LearnsWords):
        yield
        return
    known = load_words(tokenizer, cache_dir)
    tokenizer.known_words, tokenizer.new_words = known, {}
    try:
        yield
    finally:
        tokenizer.known_words = {}
    if tokenizer.new_words:
        merged = known if len(known) + len(tokenizer.new_words) <= MAX_WORDS else {}
        merged.update(tokenizer.new_words)
        save_words(tokenizer, cache_dir, merged)
    tokenizer.new_words = {}


_saving: set[tuple[int, Path | None]] = set()
_saving_lock = threading.Lock()


def remembering_query_words(tokenizer: object, cache_dir: Path | None) -> None:
    """Give the tokenizer the words earlier queries had analysed; cache its new ones when the process exits."""
    if not isinstance(tokenizer, LearnsWords):
        return
    tokenizer.known_words = load_words(tokenizer, cache_dir, "query-words")
    with _saving_lock:
        if (id(tokenizer), cache_dir) in _saving:
            return
        _saving.add((id(tokenizer), cache_dir))
    atexit.register(save_query_words, tokenizer, cache_dir)


def save_query_words(tokenizer: LearnsWords, cache_dir: Path | None) -> None:
    """Merge this process' new query words into the entry as it is now (other processes may have written)."""
    new = dict(tokenizer.query_words)
    if not new:
        return
    words = load_words(tokenizer, cache_dir, "query-words")
    if len(words) + len(new) > MAX_QUERY_WORDS:
        words = {}
    words.update(new)
    save_words(tokenizer, cache_dir, words, "query-words")
    tokenizer.query_words.clear()
