"""Does a text contain another one, checked by hashes of fixed-length windows, so the other needs not ship.

Both sides are compared as `normalised` text (NFKC, invisible characters dropped, whitespace collapsed,
case folded). A reference text (a gold provision) is stored as the hashes of its `WINDOW_CHARS`-character
windows starting at each word (at 0 and after each space); a text shorter than that is one window, itself.
A scanned text (a model input) is hashed the same way at each of its word starts, so any stored window that
occurs in it whole is found: a reference copied whole (or any window-long run of its words) is caught.
Hashes are 64-bit BLAKE2b: a reference text cannot be read back from them, only recognised.
"""

import hashlib
import sys
import unicodedata
from collections.abc import Iterable

WINDOW_CHARS = 32
# Every format character (zero-width, bidi controls), dropped by one `str.translate`.
_FORMAT = dict.fromkeys(c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf")


def normalised(text: str) -> str:
    """NFKC, format characters (zero-width, bidi) dropped, whitespace collapsed to one space, case folded."""
    return " ".join(unicodedata.normalize("NFKC", text).translate(_FORMAT).split()).casefold()


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def _starts(text: str) -> list[int]:
    return [0, *(i + 1 for i, ch in enumerate(text) if ch == " ")]


def windows(text: str, width: int = WINDOW_CHARS) -> tuple[int, list[str]]:
    """(window length, sorted window hashes) of a reference text, normalised first."""
    norm = normalised(text)
    if len(norm) <= width:
        return len(norm), [digest(norm)]
    return width, sorted({digest(norm[i : i + width]) for i in _starts(norm) if i + width <= len(norm)})


def scan(text: str, lengths: Iterable[int]) -> set[str]:
    """The hashes of every `lengths`-long window of `text` (normalised) starting at a word."""
    norm = normalised(text)
    sizes = sorted(set(lengths))
    return {digest(norm[i : i + n]) for i in _starts(norm) for n in sizes if n > 0 and i + n <= len(norm)}
