"""The leaderboard's embedded SQLite store.

Each submission is written in one transaction (runs, items, scores together), so a crash or a rejected
file never leaves a half-written entry. Per-sample scores are stored (NULL = unscored) so statistics never
need the log again. SQLite follows symlinks, so a database path (or its ``-wal``/``-shm``/``-journal`` side
file) that is a symlink is refused before SQLite opens it.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from koblex_tasks.leaderboard.safe_write import refuse_symlink
from koblex_tasks.leaderboard.submission import Submission, SubmissionRejected
from koblex_tasks.text import folded

ENV_DB = "KOBLEX_LEADERBOARD_DB"
SCHEMA_VERSION = 1
SIDE_FILES = ("-wal", "-shm", "-journal")  # what SQLite creates next to the database

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT,
    eval_id TEXT NOT NULL UNIQUE,
    content_hash TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    task TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    model TEXT NOT NULL,
    board_key TEXT NOT NULL,
    board_label TEXT NOT NULL,
    dataset_fingerprint TEXT NOT NULL,
    corpus_status TEXT NOT NULL,
    subset INTEGER NOT NULL,
    epochs INTEGER NOT NULL,
    created TEXT NOT NULL,
    submitted_at TEXT NOT NULL,
    log_path TEXT NOT NULL,
    provenance TEXT NOT NULL,
    UNIQUE (board_key, name)
);
CREATE TABLE IF NOT EXISTS items (
    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    sample_id TEXT NOT NULL,
    stratum TEXT NOT NULL,
    PRIMARY KEY (run_id, sample_id)
);
CREATE TABLE IF NOT EXISTS scores (
    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    sample_id TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    metric TEXT NOT NULL,
    value REAL,
    PRIMARY KEY (run_id, sample_id, epoch, metric)
);
CREATE TABLE IF NOT EXISTS judge_audits (
    judge_model TEXT PRIMARY KEY,
    summary TEXT NOT NULL,
    report TEXT NOT NULL,
    attached_at TEXT NOT NULL
);
"""


def default_db_path() -> Path:
    """``$KOBLEX_LEADERBOARD_DB``, else ``leaderboard.sqlite`` in the user's data directory."""
    env = os.environ.get(ENV_DB)
    if env:
        return Path(env)
    try:
        from platformdirs import user_data_dir

        base = Path(user_data_dir("koblex-tasks", appauthor=False))
    except ImportError:  # pragma: no cover - platformdirs ships with inspect_ai
        base = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "koblex-tasks"
    return base / "leaderboard.sqlite"


@dataclass(frozen=True)
class RunRow:
    run_id: int
    name: str
    benchmark: str
    model: str
    board_key: str
    board_label: str
    corpus_status: str
    subset: bool
    created: str
    submitted_at: str
    provenance: dict[str, Any]


class Store:
    """A leaderboard database; use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_db_path()
        for candidate in (self.path, *(self.path.with_name(self.path.name + s) for s in SIDE_FILES)):
            refuse_symlink(candidate)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, isolation_level=None)  # explicit BEGIN/COMMIT below
        self.conn.execute("PRAGMA foreign_keys = ON")
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.executescript(SCHEMA)  # idempotent (IF NOT EXISTS)
        with self.transaction():
            self.conn.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        version = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
        if int(version) != SCHEMA_VERSION:
            raise RuntimeError(
                f"{self.path}: schema version {version}, this koblex-tasks reads {SCHEMA_VERSION}"
            )

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    # ------------------------------------------------------------------ writing

    def add(self, sub: Submission) -> int:
        """Store a validated submission in one transaction; duplicates and clashes raise SubmissionRejected."""
        with self.transaction() as c:
            dup = c.execute(
                "SELECT run_id, name, eval_id = ? FROM runs WHERE eval_id = ? OR content_hash = ?",
                (sub.eval_id, sub.eval_id, sub.content_hash),
            ).fetchone()
            if dup:
                what = "the same eval id" if dup[2] else "identical per-sample outputs and scores"
                raise SubmissionRejected(
                    sub.log_path, [f"duplicate of stored run #{dup[0]} {dup[1]!r} ({what})"]
                )
            same = folded(sub.name)
            clash = next(
                (
                    row
                    for row in c.execute(
                        "SELECT run_id, name FROM runs WHERE board_key = ?", (sub.board_key,)
                    )
                    if folded(row[1]) == same
                ),
                None,
            )
            if clash:
                alike = (
                    ""
                    if clash[1] == sub.name
                    else f" (as {sub.name!r} reads after NFKC and confusable folding)"
                )
                raise SubmissionRejected(
                    sub.log_path,
                    [
                        f"run #{clash[0]} on this board is already named {clash[1]!r}{alike}: pass --name to rename"
                    ],
                )
            other = c.execute(
                "SELECT run_id, name FROM runs WHERE board_key = ? ORDER BY run_id LIMIT 1", (sub.board_key,)
            ).fetchone()
            if other:
                stored = {
                    r[0] for r in c.execute("SELECT sample_id FROM items WHERE run_id = ?", (other[0],))
                }
                mine = set(sub.strata)
                if stored != mine:
                    raise SubmissionRejected(
                        sub.log_path,
                        [
                            f"sample ids differ from run #{other[0]} {other[1]!r} on the same board "
                            f"({len(mine - stored)} new, {len(stored - mine)} missing) although the dataset "
                            "fingerprint is the same"
                        ],
                    )
            cur = c.execute(
                "INSERT INTO runs(eval_id, content_hash, name, task, benchmark, model, board_key, board_label,"
                " dataset_fingerprint, corpus_status, subset, epochs, created, submitted_at, log_path,"
                " provenance) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    sub.eval_id,
                    sub.content_hash,
                    sub.name,
                    sub.task,
                    sub.benchmark,
                    sub.model,
                    sub.board_key,
                    sub.board_label,
                    sub.dataset_fingerprint,
                    sub.corpus_status,
                    int(sub.subset),
                    sub.epochs,
                    sub.created,
                    datetime.now(UTC).isoformat(timespec="seconds"),
                    sub.log_path,
                    json.dumps(sub.provenance, ensure_ascii=False, allow_nan=False),
                ),
            )
            assert cur.lastrowid is not None  # an INSERT into a rowid table always sets it
            run_id = cur.lastrowid
            c.executemany(
                "INSERT INTO items(run_id, sample_id, stratum) VALUES (?,?,?)",
                [(run_id, sid, stratum) for sid, stratum in sub.strata.items()],
            )
            c.executemany(
                "INSERT INTO scores(run_id, sample_id, epoch, metric, value) VALUES (?,?,?,?,?)",
                [(run_id, sid, ep, metric, value) for sid, ep, metric, value in sub.scores],
            )
        return run_id

    def remove(self, run_id: int) -> bool:
        with self.transaction() as c:
            return c.execute("DELETE FROM runs WHERE run_id = ?", (run_id,)).rowcount > 0

    def attach_audit(self, judge_model: str, summary: dict[str, Any], report: dict[str, Any]) -> None:
        with self.transaction() as c:
            c.execute(
                "INSERT OR REPLACE INTO judge_audits(judge_model, summary, report, attached_at) VALUES (?,?,?,?)",
                (
                    judge_model,
                    json.dumps(summary, allow_nan=False),
                    json.dumps(report, ensure_ascii=False, allow_nan=False),
                    datetime.now(UTC).isoformat(timespec="seconds"),
                ),
            )

    # ------------------------------------------------------------------ reading

    def unearned_run(self) -> str | None:
        """The first stored run that did not pass the event rules at submission (stored by an earlier
        version, or an edited row), as one line; None when every run did. A released replay (verified by the
        reference manifest) needs no events."""
        for run in self.runs():
            events = (run.provenance.get("verification") or {}).get("events") or {}
            released = (run.provenance.get("replay") or {}).get("released_file")
            if released or events.get("event_rules") == "passed":
                continue
            return (
                f"run #{run.run_id} {run.name!r} has no record of passing the event rules (stored before them, "
                f"or an edited database): remove it and submit its log again"
            )
        return None

    def counts(self) -> dict[str, int]:
        return {
            t: self.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("runs", "items", "scores", "judge_audits")
        }

    def runs(self, board_key: str | None = None) -> list[RunRow]:
        sql = (
            "SELECT run_id, name, benchmark, model, board_key, board_label, corpus_status, subset, created,"
            " submitted_at, provenance FROM runs"
        )
        rows = self.conn.execute(
            sql + (" WHERE board_key = ? ORDER BY run_id" if board_key else " ORDER BY run_id"),
            (board_key,) if board_key else (),
        ).fetchall()
        return [
            RunRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]), r[8], r[9], json.loads(r[10]))
            for r in rows
        ]

    def find_run(self, ref: str, exact: bool = False) -> RunRow:
        """A run by id (``3`` or ``#3``), exact name, or eval id, else (unless `exact`) a unique name fragment.

        Ambiguous names and fragments are an error; so is an empty reference.
        """
        if not ref.strip():
            raise LookupError("give a run id (#3) or a run name (see `koblex leaderboard list`)")
        runs = self.runs()
        key = ref.lstrip("#")
        if key.isdigit():
            hits = [r for r in runs if r.run_id == int(key)]
        else:
            hits = [r for r in runs if r.name == ref] or [
                r for r in runs if r.provenance.get("eval_id") == ref
            ]
            if not hits and not exact:
                hits = [r for r in runs if ref.lower() in r.name.lower()]
        if not hits:
            exactly = " (an exact run id, name or eval id)" if exact else ""
            raise LookupError(f"no stored run matches {ref!r}{exactly} (use `koblex leaderboard list`)")
        if len(hits) > 1:
            listed = ", ".join(f"#{r.run_id} {r.name!r}" for r in hits[:6])
            raise LookupError(f"{ref!r} matches {len(hits)} runs ({listed}); use the run id")
        return hits[0]

    def run_size(self, run_id: int) -> tuple[int, int]:
        """(items, score rows) stored for a run: what removing it deletes."""
        return (
            self.conn.execute("SELECT COUNT(*) FROM items WHERE run_id = ?", (run_id,)).fetchone()[0],
            self.conn.execute("SELECT COUNT(*) FROM scores WHERE run_id = ?", (run_id,)).fetchone()[0],
        )

    def items(self, run_id: int) -> dict[str, str]:
        return dict(self.conn.execute("SELECT sample_id, stratum FROM items WHERE run_id = ?", (run_id,)))

    def raw_scores(self, run_id: int) -> list[tuple[str, int, str, Any, str]]:
        """Every stored score row of a run as SQLite holds it: (sample_id, epoch, metric, value, its type)."""
        return list(
            self.conn.execute(
                "SELECT sample_id, epoch, metric, value, typeof(value) FROM scores WHERE run_id = ?",
                (run_id,),
            )
        )

    def item_scores(self, run_id: int) -> dict[str, dict[str, float | None]]:
        """metric -> sample_id -> mean over epochs of the scored values (None when no epoch was scored)."""
        out: dict[str, dict[str, float | None]] = {}
        rows = self.conn.execute(
            "SELECT metric, sample_id, AVG(value) FROM scores WHERE run_id = ? GROUP BY metric, sample_id",
            (run_id,),
        )
        for metric, sid, value in rows:
            out.setdefault(metric, {})[sid] = value
        return out

    def audits(self) -> dict[str, dict[str, Any]]:
        return {
            m: {"summary": json.loads(s), "attached_at": t}
            for m, s, t in self.conn.execute("SELECT judge_model, summary, attached_at FROM judge_audits")
        }
