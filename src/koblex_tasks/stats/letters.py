"""Compact letter display: systems sharing a letter are not significantly different."""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from koblex_tasks.stats.inputs import check_names


@dataclass(frozen=True)
class LetterEntry:
    """One row of a compact letter display.

    ``letters`` is for people; ``groups`` holds the letter indices (0 = "a") for code, since past 52
    letters the display uses tokens like "a2" and characters alone no longer identify letters.
    """

    name: str
    mean: float
    letters: str
    groups: tuple[int, ...]


@dataclass(frozen=True)
class CompactLetterDisplay:
    """Systems ordered best first; systems sharing a letter are not significantly different."""

    entries: tuple[LetterEntry, ...]
    reason: str | None = None

    def letters_by_name(self) -> dict[str, str]:
        """Map each system name to its letters."""
        return {e.name: e.letters for e in self.entries}


def _letter(k: int) -> str:
    """a-z, A-Z, then a2..z2, a3.. (unique tokens; a display that long is a warning in itself)."""
    alphabet = string.ascii_lowercase + string.ascii_uppercase
    return alphabet[k] if k < len(alphabet) else f"{alphabet[k % 26]}{k // 26}"


def compact_letters(
    names: Sequence[str],
    means: Sequence[float],
    significant_pairs: Iterable[tuple[str, str]],
    higher_is_better: bool = True,
    max_letters: int | None = None,
) -> CompactLetterDisplay:
    """Compact letter display by Piepho's (2004) insert-and-absorb algorithm with a final sweep.

    Start with one letter shared by all; for each significant pair split every letter containing
    both (one copy without each) and absorb letters that are subsets of others; then sweep letters
    that are not needed for any non-significant pair. Letters are ordered by their best member, so
    the best system gets "a".

    Letters are the maximal groups of mutually indistinguishable systems, which an irregular
    significance pattern can make exponentially many. Past ``max_letters`` (default max(52, 3n)) the
    display is abandoned: entries get empty letters and ``reason`` says why, instead of hanging.
    """
    names = check_names(names, len(names))
    if len(means) != len(names):
        raise ValueError(f"{len(means)} means for {len(names)} systems")
    sign = -1.0 if higher_is_better else 1.0
    rank_order = sorted(range(len(names)), key=lambda i: (sign * float(means[i]), i))
    rank = {names[i]: r for r, i in enumerate(rank_order)}
    sig: set[frozenset[int]] = set()
    for u, v in significant_pairs:
        if u not in rank or v not in rank:
            raise ValueError(f"unknown system in significant pair ({u!r}, {v!r})")
        if u != v:
            sig.add(frozenset((rank[u], rank[v])))
    n = len(names)
    limit = max(52, 3 * n) if max_letters is None else max_letters
    columns: list[set[int]] = [set(range(n))] if n else []
    for i, j in sorted(tuple(sorted(p)) for p in sig):
        kept = [col for col in columns if not (i in col and j in col)]
        split = [col for col in columns if i in col and j in col]
        if split:
            columns = kept + _absorb_new(kept, [c for col in split for c in (col - {i}, col - {j})])
        if len(columns) > limit:
            blank = (LetterEntry(str(names[i]), float(means[i]), "", ()) for i in rank_order)
            reason = f"significance pattern needs more than {limit} letters; no letter display"
            return CompactLetterDisplay(tuple(blank), reason)
    columns = _sweep(columns, sig)
    columns.sort(key=lambda col: sorted(col))
    entries = []
    for r, i in enumerate(rank_order):
        groups = tuple(k for k, col in enumerate(columns) if r in col)
        letters = "".join(_letter(k) for k in groups)
        entries.append(LetterEntry(name=str(names[i]), mean=float(means[i]), letters=letters, groups=groups))
    return CompactLetterDisplay(tuple(entries))


def _absorb_new(kept: list[set[int]], new: list[set[int]]) -> list[set[int]]:
    """Absorb after a split: only the new letters can be redundant, as the kept ones were already
    not subsets of the letter that was split (which contains every new letter)."""
    out: list[set[int]] = []
    for k, col in enumerate(new):
        if any(col <= other for other in kept):
            continue
        if any(col < other or (col == other and m < k) for m, other in enumerate(new) if m != k):
            continue
        out.append(col)
    return out


def _absorb(columns: list[set[int]]) -> list[set[int]]:
    """Drop letters whose members are a subset of another letter's (duplicates keep one copy)."""
    kept: list[set[int]] = []
    for k, col in enumerate(columns):
        dominated = any(
            (col < other) or (col == other and m < k) for m, other in enumerate(columns) if m != k
        )
        if not dominated:
            kept.append(col)
    return kept


def _sweep(columns: list[set[int]], sig: set[frozenset[int]]) -> list[set[int]]:
    """Remove a system from a letter when every non-significant link it has there exists elsewhere."""
    columns = [set(c) for c in columns]
    for k, col in enumerate(columns):
        for i in sorted(col):
            others = [c for m, c in enumerate(columns) if m != k]
            if not any(i in c for c in others):
                continue  # its only letter
            needed = any(
                frozenset((i, j)) not in sig and not any(i in c and j in c for c in others)
                for j in col
                if j != i
            )
            if not needed:
                col.discard(i)
    return _absorb([c for c in columns if c])
