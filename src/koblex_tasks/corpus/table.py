"""Provisions as one UTF-8 buffer plus offsets: built while parsing, saved to the cache, memory-mapped back.

A 250K-paragraph corpus is 140 MB of JSONL that takes about two seconds to parse; as a table it opens in
milliseconds and a provision is decoded only when a run asks for it (a retrieved hit), so a warm start parses
nothing. Provision i occupies `bounds[3i] : bounds[3i + 3]` of the buffer: its id, hierarchy and content in
turn, so a paragraph's text (hierarchy + content) is one slice. A table holds one level (paragraphs or
articles, `provision.Level`), which the caller keeps with it (the statute cache's manifest).
"""

import mmap
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

import numpy as np

from koblex_tasks.corpus.provision import ARTICLE, ARTICLE_SEPARATOR, PARAGRAPH, Level, Provision

TEXT_FILE = "text.bin"
BOUNDS_FILE = "bounds.npy"
_KEYS_BLOCK = 10_000  # provisions whose bounds become Python ints at a time
_SEPARATOR = ARTICLE_SEPARATOR.encode()


class ProvisionTable(Sequence[Provision]):
    """A read-only sequence of provisions over a buffer (bytes or a memory map) and its bounds."""

    def __init__(
        self, text: bytes | bytearray | mmap.mmap, bounds: np.ndarray, level: Level = PARAGRAPH
    ) -> None:
        self._text = text
        self._bounds = bounds
        self.level = level

    def __len__(self) -> int:
        return (len(self._bounds) - 1) // 3

    @overload
    def __getitem__(self, i: int) -> Provision: ...
    @overload
    def __getitem__(self, i: slice) -> list[Provision]: ...
    def __getitem__(self, i: int | slice) -> Provision | list[Provision]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"provision {i} of {n}")
        a, b, c, d = self._bounds[3 * (i % n) : 3 * (i % n) + 4].tolist()
        text = self._text
        return Provision(text[a:b].decode(), text[b:c].decode(), text[c:d].decode(), self.level)

    def __iter__(self) -> Iterator[Provision]:
        return (self[i] for i in range(len(self)))

    def iter_texts(self) -> Iterator[str]:
        """`Provision.text` of every provision in order (a paragraph's is one slice, decoded in one step)."""
        text, article = self._text, self.level == ARTICLE
        for start in range(0, len(self), _KEYS_BLOCK):
            bounds = self._bounds[3 * start : 3 * (start + _KEYS_BLOCK) + 1].tolist()
            for j in range(0, len(bounds) - 1, 3):
                if article:
                    heading, body = text[bounds[j + 1] : bounds[j + 2]], text[bounds[j + 2] : bounds[j + 3]]
                    yield heading.decode() + ARTICLE_SEPARATOR + body.decode()
                else:
                    yield text[bounds[j + 1] : bounds[j + 3]].decode()

    def save(self, directory: Path) -> None:
        (directory / TEXT_FILE).write_bytes(self._text)
        np.save(directory / BOUNDS_FILE, np.asarray(self._bounds))

    @classmethod
    def load(cls, directory: Path, level: Level = PARAGRAPH) -> "ProvisionTable":
        """Memory-map a saved table (pages are read as provisions are decoded)."""
        bounds = np.load(directory / BOUNDS_FILE, mmap_mode="r")
        with (directory / TEXT_FILE).open("rb") as handle:
            size = handle.seek(0, 2)
            text: bytes | bytearray | mmap.mmap = (
                mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            )
        if len(bounds) % 3 != 1 or int(bounds[-1]) != len(text):
            raise ValueError("provision table bounds do not fit its text")
        return cls(text, bounds, level)


class TableBuilder:
    """Appends provisions to a growing buffer (no Provision objects are kept while a corpus is parsed)."""

    def __init__(self, level: Level = PARAGRAPH) -> None:
        self._text = bytearray()
        self._bounds = array("q", [0])
        self.level = level

    def __len__(self) -> int:
        return (len(self._bounds) - 1) // 3

    def add(self, row_id: str, hierarchy: str, content: str) -> None:
        for part in (row_id, hierarchy, content):
            self._text += part.encode()
            self._bounds.append(len(self._text))

    def text_bytes(self, i: int) -> bytes:
        """Provision i's text, encoded (what duplicates are recognised by)."""
        b, text = self._bounds, self._text
        if self.level == ARTICLE:
            return (
                bytes(text[b[3 * i + 1] : b[3 * i + 2]])
                + _SEPARATOR
                + bytes(text[b[3 * i + 2] : b[3 * i + 3]])
            )
        return bytes(text[b[3 * i + 1] : b[3 * i + 3]])

    def row_id(self, i: int) -> str:
        return self._text[self._bounds[3 * i] : self._bounds[3 * i + 1]].decode()

    def table(self) -> ProvisionTable:
        return ProvisionTable(self._text, np.frombuffer(self._bounds, dtype=np.int64), self.level)
