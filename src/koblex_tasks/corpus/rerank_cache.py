"""Rerank scores on disk, so a second run, another method or another model of a grid scores only new pairs.

The rerank query is the question (not the model's guess), so every model of a grid asks for the same
(question, passage) pairs. An entry is keyed by the scorer's identity (model, revision, dtype, max length, or
the engine that scored) and the SHA-256 of the query and of the passage, and carries a check of its own key
and score: an entry whose check fails, whose score is not a finite number, or a database that cannot be read
is recomputed (and replaced), never trusted. One SQLite file per cache directory, shared by processes.
"""

from __future__ import annotations

import hashlib
import logging
import math
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from koblex_tasks.corpus.cache import cache_key, cache_root

logger = logging.getLogger(__name__)

CACHE_FILE = "rerank_scores.sqlite"
_CHUNK = 500  # keys per SQL query (SQLite's variable limit is far above)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pair_key(scorer: str, query: str, passage: str) -> str:
    """The entry of one (query, passage) pair for one scorer identity (`scorer_identity`)."""
    return _sha(f"{scorer}\x00{_sha(query)}\x00{_sha(passage)}")


def _check(key: str, score: float) -> str:
    return _sha(f"{key}\x00{score!r}")[:16]


def scorer_identity(parts: Mapping[str, object]) -> str:
    """A short hash of what determines a score: model, revision, dtype, max length (or the engine)."""
    return cache_key(dict(parts))


class ScoreCache:
    """(key -> score) in SQLite, safe across threads of one process and across processes."""

    def __init__(self, directory: Path | None = None) -> None:
        self.path = (directory or cache_root() / "rerank") / CACHE_FILE
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._db = self._open()
            except sqlite3.DatabaseError as exc:  # not a database (a truncated or overwritten file)
                aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
                logger.warning(
                    "rerank cache %s cannot be read (%s): moved to %s, recomputing", self.path, exc, aside
                )
                self.path.rename(aside)
                self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        db.execute("CREATE TABLE IF NOT EXISTS scores (key TEXT PRIMARY KEY, score, checksum TEXT)")
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def get_many(self, keys: Sequence[str]) -> dict[str, float]:
        """The trusted scores among `keys`; a corrupt entry is left out (so it is recomputed and replaced)."""
        found: dict[str, float] = {}
        with self._lock:
            db = self._connect()
            for start in range(0, len(keys), _CHUNK):
                chunk = list(keys[start : start + _CHUNK])
                marks = ",".join("?" * len(chunk))
                query = f"SELECT key, score, checksum FROM scores WHERE key IN ({marks})"
                for key, score, checksum in db.execute(query, chunk):
                    if isinstance(score, float) and math.isfinite(score) and checksum == _check(key, score):
                        found[key] = score
                    else:
                        logger.warning("rerank cache %s: corrupt entry %s recomputed", self.path, key[:12])
        return found

    def put_many(self, scores: Mapping[str, float]) -> None:
        rows = [(k, float(s), _check(k, float(s))) for k, s in scores.items() if math.isfinite(s)]
        if not rows:
            return
        with self._lock:
            db = self._connect()
            with db:
                db.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?)", rows)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
