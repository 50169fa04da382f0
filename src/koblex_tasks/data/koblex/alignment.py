"""Which released prediction answers which KoBLEX question, decided once for a whole file before any eval.

The released files do not carry question ids, and they do not all store the same text: most store
`background + question`, the open-model ParSeR files the question alone, and some ProbTree/BeamAggr files an
older wording of a few questions. Each row is matched by the first rule that applies:

1. `text`: its text equals one question's `background + question` (whitespace ignored);
2. `question`: its text equals one question's `question` alone (whitespace ignored);
3. `order`: the row's position, only when the file has exactly one row per question and the rows matched by
   text or question all sit at their own position (so the file is in dataset order), at least
   `MIN_AGREEING_SHARE` of the rows matched that way, and each remaining row is a near-identical wording of
   the question at its position (`similarity` >= `MIN_SIMILARITY`).

Two rows answering one question, or any row or question still unmatched, is a `DataError` that names the
rows (file:line and the question's first characters). The rule used is kept per row, so logs show it.
"""

import difflib
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from koblex_tasks.data.koblex.dataset import load_koblex
from koblex_tasks.data.koblex.released import ReleasedPrediction, load_released, question_key
from koblex_tasks.errors import DataError
from koblex_tasks.jsonl import FileSignature, file_signature

Rule = Literal["text", "question", "order"]
RULES: tuple[Rule, ...] = ("text", "question", "order")
# Row order is trusted only when at least this share of rows already matched by text or question ...
MIN_AGREEING_SHARE = 0.9
# ... and every other row is this similar (difflib ratio, whitespace removed) to the question at its position.
# The released older wordings (a quote mark, a typo, two added words) score >= 0.98 against their question; the
# most similar pair of two different questions of the dataset scores 0.75.
MIN_SIMILARITY = 0.9
SHOWN_ROWS = 5  # rows named in an error message before "... and N more"
PREVIEW_CHARS = 30


@dataclass(frozen=True)
class AlignedPrediction:
    prediction: ReleasedPrediction
    rule: Rule
    similarity: float | None = None  # the `order` rule's evidence

    def describe(self) -> dict[str, Any]:
        """What the log records per sample: where the answer came from and why it belongs to the sample."""
        out: dict[str, Any] = {"line": self.prediction.line, "rule": self.rule}
        if self.similarity is not None:
            out["similarity"] = round(self.similarity, 4)
        return out


@dataclass(frozen=True)
class Alignment:
    file: str
    by_id: dict[str, AlignedPrediction]

    def counts(self) -> dict[str, int]:
        """Rows aligned by each rule, every rule listed (zeros included), in rule order."""
        return {rule: sum(a.rule == rule for a in self.by_id.values()) for rule in RULES}

    def lines(self, rule: Rule) -> list[int]:
        """The file lines aligned by `rule`, ascending (for `order`: the rows a reader may want to check)."""
        return sorted(a.prediction.line for a in self.by_id.values() if a.rule == rule)


def similarity(row_text: str, record: dict[str, Any]) -> float:
    """How close a row is to a question: the better of its ratio to `background + question` and to `question`."""
    row = question_key(row_text)
    return max(
        difflib.SequenceMatcher(None, row, question_key(target), autojunk=False).ratio()
        for target in (record["background"] + record["question"], record["question"])
    )


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat[:PREVIEW_CHARS] + ("…" if len(flat) > PREVIEW_CHARS else ""))


def _listing(items: Sequence[str]) -> str:
    shown = "; ".join(items[:SHOWN_ROWS])
    return shown + (f"; … and {len(items) - SHOWN_ROWS} more" if len(items) > SHOWN_ROWS else "")


def _unique_index(keys: list[str]) -> dict[str, int]:
    """key -> position, for keys that occur once (an ambiguous key matches nothing by text)."""
    positions: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        positions.setdefault(key, []).append(i)
    return {key: found[0] for key, found in positions.items() if len(found) == 1}


class _Aligner:
    """One alignment of `predictions` (file order) to `records` (dataset order)."""

    def __init__(
        self, predictions: list[ReleasedPrediction], records: list[dict[str, Any]], file: str
    ) -> None:
        self.predictions, self.records, self.file = predictions, records, file
        self.matched: dict[int, tuple[int, Rule]] = {}  # prediction position -> (record position, rule)

    def _row(self, i: int) -> str:
        p = self.predictions[i]
        return f"{self.file}:{p.line} {_preview(p.question)}"

    def _question(self, j: int) -> str:
        r = self.records[j]
        return f"question {j + 1} ({r['id']}) {_preview(r['question'])}"

    def by_text(self) -> None:
        """Rules 1 and 2; a second row for an already answered question is an error naming both rows."""
        full = _unique_index([question_key(r["background"] + r["question"]) for r in self.records])
        alone = _unique_index([question_key(r["question"]) for r in self.records])
        owner: dict[int, int] = {}
        for i, p in enumerate(self.predictions):
            key = question_key(p.question)
            hit: tuple[int, Rule] | None = (
                (full[key], "text") if key in full else (alone[key], "question") if key in alone else None
            )
            if hit is None:
                continue
            if hit[0] in owner:
                first = self.predictions[owner[hit[0]]]
                raise DataError(
                    self.file,
                    p.line,
                    f"answers the same question as line {first.line}: {self._question(hit[0])}",
                )
            owner[hit[0]] = i
            self.matched[i] = hit

    def order_refusal(self) -> str | None:
        """Why row order cannot align the rest (None: it can)."""
        n_rows, n_questions = len(self.predictions), len(self.records)
        if n_rows != n_questions:
            return f"the file has {n_rows} rows for {n_questions} questions"
        moved = [i for i, (j, _) in self.matched.items() if i != j]
        if moved:
            return "its rows are not in dataset order: " + _listing(
                [f"{self._row(i)} is {self._question(self.matched[i][0])}" for i in moved]
            )
        if len(self.matched) < MIN_AGREEING_SHARE * n_rows:
            return (
                f"only {len(self.matched)} of {n_rows} rows match a question by text "
                f"(at least {MIN_AGREEING_SHARE:.0%} needed)"
            )
        return None

    def by_order(self) -> dict[int, float]:
        """Rule 3 for the unmatched rows: position i -> its similarity to question i, all above the bar."""
        scores = {
            i: similarity(self.predictions[i].question, self.records[i])
            for i in range(len(self.predictions))
            if i not in self.matched
        }
        unlike = [i for i, s in scores.items() if s < MIN_SIMILARITY]
        if unlike:
            raise DataError(
                self.file,
                None,
                f"{len(unlike)} rows in dataset order are not near-identical wordings of their question "
                f"(similarity < {MIN_SIMILARITY}): "
                + _listing([f"{self._row(i)} vs {self._question(i)}: {scores[i]:.2f}" for i in unlike]),
            )
        return scores

    def unaligned_error(self, reason: str) -> DataError:
        rows = [i for i in range(len(self.predictions)) if i not in self.matched]
        answered = {j for j, _ in self.matched.values()}
        questions = [j for j in range(len(self.records)) if j not in answered]
        parts = [
            f"{len(questions)} questions have no prediction and {len(rows)} predictions match no question"
        ]
        if rows:
            parts.append("unmatched rows: " + _listing([self._row(i) for i in rows]))
        if questions:
            parts.append("unanswered: " + _listing([self._question(j) for j in questions]))
        parts.append(f"row order not used: {reason}")
        return DataError(self.file, None, "; ".join(parts))

    def run(self) -> Alignment:
        self.by_text()
        complete = len(self.matched) == len(self.predictions) == len(self.records)
        scores: dict[int, float] = {}
        if not complete:
            reason = self.order_refusal()
            if reason is not None:
                raise self.unaligned_error(reason)
            scores = self.by_order()
        by_id: dict[str, AlignedPrediction] = {}
        for i, p in enumerate(self.predictions):
            j, rule = self.matched.get(i, (i, "order"))
            by_id[self.records[j]["id"]] = AlignedPrediction(p, rule, scores.get(i))
        return Alignment(file=self.file, by_id=by_id)


def align(predictions: list[ReleasedPrediction], records: list[dict[str, Any]], file: str) -> Alignment:
    """Match every released row to one question (rules in the module docstring), or raise a DataError."""
    return _Aligner(predictions, records, file).run()


@functools.lru_cache(maxsize=16)
def _aligned(file: FileSignature, data: FileSignature, file_arg: str) -> Alignment:
    return align(load_released(file_arg), load_koblex(data[0]).records, file_arg)


def align_released_file(file: str, data: str | None = None) -> Alignment:
    """The alignment of a released file to the questions in `data` (default: the published dataset).

    Computed once per process for an unchanged pair of files: the pre-eval check of `koblex replay` and the
    replay solver share it.
    """
    return _aligned(file_signature(file), file_signature(data), str(file))
