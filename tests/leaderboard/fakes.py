"""In-memory stand-ins for the leaderboard store, so boards of any registered benchmark need no eval logs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from koblex_tasks.leaderboard.store import RunRow

Scores = Mapping[str, Mapping[str, float | None]]  # metric -> item -> value


class FakeStore:
    """The read side of `Store` (runs, items, item scores, audits) over runs given as score tables."""

    def __init__(
        self,
        benchmark: str,
        items: Mapping[str, str],
        scores: Sequence[Scores],
        *,
        board_key: str = "toy-board",
        names: Sequence[str] | None = None,
        provenance: Mapping[str, Any] | None = None,
        audits: Mapping[str, Any] | None = None,
        provenances: Sequence[Mapping[str, Any]] | None = None,  # one per run (instead of `provenance`)
    ) -> None:
        self._items = dict(items)
        self._runs = [
            RunRow(k + 1, names[k] if names else f"system {k}", benchmark, f"toy/m{k}", board_key,
                   "stored label", "full", False, f"2026-01-{k + 1:02d}T00:00:00+00:00",
                   "2026-02-01T00:00:00+00:00", dict(provenances[k] if provenances else provenance or {}))
            for k in range(len(scores))
        ]  # fmt: skip
        self._scores = {
            r.run_id: {m: dict(v) for m, v in s.items()} for r, s in zip(self._runs, scores, strict=True)
        }
        self._audits = dict(audits or {})

    def runs(self, board_key: str | None = None) -> list[RunRow]:
        return [r for r in self._runs if board_key in (None, r.board_key)]

    def items(self, run_id: int) -> dict[str, str]:
        return dict(self._items)

    def item_scores(self, run_id: int) -> dict[str, dict[str, float | None]]:
        return self._scores[run_id]

    def raw_scores(self, run_id: int) -> list[tuple[str, int, str, Any, str]]:
        """The rows as SQLite would type them (one epoch)."""
        return [
            (sid, 1, metric, v, "null" if v is None else "real")
            for metric, by_item in self._scores[run_id].items()
            for sid, v in by_item.items()
        ]

    def audits(self) -> dict[str, Any]:
        return self._audits


LEGIT_KEY = "legit | lang=ko | dataset=" + "c0ffee" * 10 + "cafe | corpus=full | rule=paper"
LEGIT_ITEMS = {f"doc{i:02d}": ("easy", "medium", "hard")[i % 3] for i in range(30)}
LEGIT_JUDGES = {
    "legit_rubric": {"models": {"openai/gpt-4.1": 30}, "prompts": {"legit/rubric@v1 sha256:" + "cd" * 32: 30}}
}


def legit_store(n_runs: int = 4) -> FakeStore:
    """A LEGIT board (a benchmark without a retrieval corpus) graded by a judge, on 30 synthetic documents."""
    rng = np.random.default_rng(7)
    tables = []
    for k in range(n_runs):
        final = {d: 5.0 * float(rng.uniform() < 0.3 + 0.15 * k) for d in LEGIT_ITEMS}
        coverage = {d: float(rng.uniform(0, 2)) for d in LEGIT_ITEMS}
        correctness = {d: float(rng.uniform(0, 3)) for d in LEGIT_ITEMS}
        total = {d: final[d] + coverage[d] + correctness[d] for d in LEGIT_ITEMS}
        tables.append(
            {
                "legit_score": total,
                "final_order": final,
                "coverage": coverage,
                "correctness": correctness,
                "judge_failure_rate": {d: 0.0 for d in LEGIT_ITEMS},
            }
        )
    provenance = {
        "judges": LEGIT_JUDGES,
        "corpus": {"kind": "not applicable: scores do not depend on a statute corpus"},
        "dataset": {"size": 300},
        "scoring": "rule=paper",
    }
    names = [f"openai/gpt-4.1 · legit_predict v{k}" for k in range(n_runs)]
    return FakeStore("legit", LEGIT_ITEMS, tables, board_key=LEGIT_KEY, names=names, provenance=provenance)
