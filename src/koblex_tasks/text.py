"""Text that came from a log, made safe to show: on a terminal, on the page, and within a length limit.

A model name, sample id or solver argument is whatever the log's author wrote. On a terminal, control
characters (ESC starts an ANSI sequence, BEL rings, NUL and CR hide text) must never reach the screen; on a
terminal or a page, bidi controls (U+202E RIGHT-TO-LEFT OVERRIDE, isolates, embeddings) reorder the text
around them. Both are shown as escapes (``\\x1b``, ``\\u202e``), so a tampered name is visible as tampered.
A backslash is kept as is (``C:\\logs`` stays readable), so an escape in the output may also be literal text.

Names: one given with ``--name`` longer than `MAX_NAME_CHARS` or holding escaped characters is refused
(the submitter can fix it); a default name built from the log (``<model> · <method>``) is cut to
`MAX_NAME_CHARS` with an ellipsis. A model id longer than `MAX_MODEL_CHARS` is refused: no provider's id
is that long, and the id is stored and shown in full.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterable
from html import escape
from typing import Any

MAX_NAME_CHARS = 200
MAX_MODEL_CHARS = 500
ELLIPSIS = "…"

# Bidirectional formatting characters (Unicode's Bidi_Control property): marks, embeddings, overrides, isolates.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Cc: C0/C1 controls and DEL; Zl/Zp: line and paragraph separators; Cs: lone surrogates (not encodable).
_ESCAPED_CATEGORIES = frozenset({"Cc", "Zl", "Zp", "Cs"})


def needs_escape(ch: str) -> bool:
    return ch in BIDI_CONTROLS or unicodedata.category(ch) in _ESCAPED_CATEGORIES


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: object, keep_newlines: bool = False) -> str:
    """`text` with every control, separator and bidi character escaped (``"\\x1b[31m"`` -> ``"\\\\x1b[31m"``).

    `keep_newlines` keeps ``\\n`` (for multi-line messages such as a rejection's list of reasons).
    """
    s = str(text)
    if not any(needs_escape(ch) for ch in s):
        return s  # the common case: nothing to do
    return "".join(ch if (keep_newlines and ch == "\n") or not needs_escape(ch) else _escape(ch) for ch in s)


def name_problem(name: str) -> str | None:
    """Why `name` (given with ``--name``) cannot be a run's name, or None."""
    if not name.strip():
        return "the name is empty"
    if len(name) > MAX_NAME_CHARS:
        return f"the name is {len(name):,} characters long (limit {MAX_NAME_CHARS})"
    if any(needs_escape(ch) for ch in name):
        return f"the name holds control or bidi characters ({printable(name)[:80]})"
    return None


def clip_name(name: str) -> str:
    """A default name cut to `MAX_NAME_CHARS` (ending in an ellipsis when cut)."""
    return name if len(name) <= MAX_NAME_CHARS else name[: MAX_NAME_CHARS - len(ELLIPSIS)] + ELLIPSIS


def model_problem(model: str) -> str | None:
    """Why a log's model id cannot be stored, or None."""
    if len(model) > MAX_MODEL_CHARS:
        return f"the model id is {len(model):,} characters long (limit {MAX_MODEL_CHARS}): {printable(model[:60])}…"
    return None


def _ascii_lookalike(ch: str) -> str:
    """The ASCII character Unicode's confusables data (via `confusable_homoglyphs`) says `ch` looks like."""
    from confusable_homoglyphs.confusables import confusables_data

    for glyph in confusables_data.get(ch, ()):
        if glyph["c"].isascii():
            return str(glyph["c"])
    return ch


def folded(text: str) -> str:
    """`text` as names and model ids are compared: NFKC (fullwidth `ｇ` is `g`), then every character that
    Unicode's confusables data maps to an ASCII look-alike replaced by it (Cyrillic `р`, `е` are `p`, `e`), so
    `rерlay/gpt-4o` folds to `replay/gpt-4o` and `ｇ_parser` to `g_parser`."""
    text = unicodedata.normalize("NFKC", text)
    if text.isascii():
        return text
    return "".join(ch if ch.isascii() else _ascii_lookalike(ch) for ch in text)


def fmt(value: float | None, scale: float = 1.0, digits: int = 2) -> str:
    """A stored value as displayed (x scale); a dash when undefined (page, plot, terminal, grid report)."""
    return "–" if value is None else f"{value * scale:.{digits}f}"


def md_cell(value: Any) -> str:
    """A Markdown table cell: renderers pass HTML through, so log text is escaped here too (and a `|` or a
    newline cannot break the table)."""
    text = "" if value is None else str(value)
    return escape(text, quote=False).replace("|", "\\|").replace("\n", " ")


def closest(value: object, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice closest to a misspelt `value` (`difflib`), None when none is close enough."""
    found = difflib.get_close_matches(str(value), list(choices), n=1, cutoff=cutoff)
    return found[0] if found else None


def did_you_mean(close: str | None) -> str:
    """' (did you mean 'x'?)' for a close match, '' for none: the hint every refusal appends."""
    return f" (did you mean '{close}'?)" if close else ""
