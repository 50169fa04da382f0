"""Which released prediction answers which KoBLEX question, decided once for a whole file before any eval.

The released files do not carry question ids, and they do not all store the same text: most store
`background + question`, the open-model ParSeR files the question alone, and the open-model ProbTree/BeamAggr
files an older wording of up to 28 questions, in dataset order. The official metric code pairs rows with
questions by position; here each row is matched by the first rule that applies:

1. `text`: its text equals one question's `background + question` (whitespace ignored);
2. `question`: its text equals one question's `question` alone (whitespace ignored);
3. `order`: the row's position, as the official code pairs it, only when the text is evidence that the file
   is in dataset order: exactly one row per question, every row matched by text or question at its own
   position, at least `MIN_AGREEING_SHARE` of the rows matched that way, and each remaining row more like
   the question at its position than like any other question (and at least `MIN_SIMILARITY` like it).

Two rows answering one question, a row matched by text away from its position, or any row or question still
unmatched, is a `DataError` that names the rows (file:line and the question's first characters). The rule is
kept per row (with the similarity to its question and to the closest other one for `order`), so logs show it.
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
# Row order is trusted only when most rows already matched by text or question, all at their own position ...
MIN_AGREEING_SHARE = 0.5
# ... and every other row is closer (difflib ratio, whitespace removed) to the question at its position than
# to any other question, and at least this close. The released older wordings (a quote mark, a reordered
# background, added sentences) score 0.74-1.00 against their own question and at most 0.42 against any other.
MIN_SIMILARITY = 0.6
SHOWN_ROWS = 5  # rows named in an error message before "... and N more"
PREVIEW_CHARS = 30


@dataclass(frozen=True)
class AlignedPrediction:
    prediction: ReleasedPrediction
    rule: Rule
    similarity: float | None = None  # the `order` rule's evidence: the row's similarity to its question ...
    runner_up: float | None = None  # ... and to the closest other question

    def describe(self) -> dict[str, Any]:
        """What the log records per sample: where the answer came from and why it belongs to the sample."""
        out: dict[str, Any] = {"line": self.prediction.line, "rule": self.rule}
        if self.similarity is not None:
            out["similarity"] = round(self.similarity, 4)
        if self.runner_up is not None:
            out["closest_other_similarity"] = round(self.runner_up, 4)
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

    def lowest_similarity(self) -> tuple[float, int] | None:
        """(similarity, file line) of the least similar row placed by position; None when none was."""
        placed = [(a.similarity, a.prediction.line) for a in self.by_id.values() if a.similarity is not None]
        return min(placed) if placed else None

    def summary(self) -> str:
        """One line: rows per rule and, when rows were placed by position, how many and the lowest similarity."""
        counts = ", ".join(f"{rule} {n}" for rule, n in self.counts().items())
        lowest = self.lowest_similarity()
        if lowest is None:
            return f"aligned rows: {counts}"
        lines = ", ".join(map(str, self.lines("order")))
        return (
            f"aligned rows: {counts}; {self.counts()['order']} reworded rows paired by position as the official "
            f"code does, lowest similarity {lowest[0]:.2f} (line {lowest[1]}); lines {lines}"
        )


def similarity(row_text: str, record: dict[str, Any], at_least: float = 0.0) -> float:
    """How close a row is to a question: the better of its ratio to `background + question` and to `question`.

    A ratio that cannot reach `at_least` (by difflib's cheap upper bound) is not computed: 0.0 stands for it.
    """
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq1(question_key(row_text))
    best = 0.0
    for target in (record["background"] + record["question"], record["question"]):
        matcher.set_seq2(question_key(target))
        if matcher.quick_ratio() > max(best, at_least):
            best = max(best, matcher.ratio())
    return best


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

    def _closest_other(self, i: int) -> tuple[float, int | None]:
        """The similarity of row i to the closest question other than its own, and that question's position
        (a question that cannot beat the closest so far is not compared in full)."""
        best, where = 0.0, None
        for j, record in enumerate(self.records):
            if j != i:
                s = similarity(self.predictions[i].question, record, at_least=best)
                if s > best:
                    best, where = s, j
        return best, where

    def by_order(self) -> dict[int, tuple[float, float]]:
        """Rule 3 for the unmatched rows: position i -> (similarity to question i, to the closest other one)."""
        scores: dict[int, tuple[float, float]] = {}
        unlike: list[str] = []
        for i in range(len(self.predictions)):
            if i in self.matched:
                continue
            own = similarity(self.predictions[i].question, self.records[i])
            other, where = self._closest_other(i)
            scores[i] = (own, other)
            if own < MIN_SIMILARITY or other >= own:
                closer = f", {self._question(where)} is as close: {other:.2f}" if where is not None else ""
                unlike.append(f"{self._row(i)} vs {self._question(i)}: {own:.2f}{closer}")
        if unlike:
            raise DataError(
                self.file,
                None,
                f"{len(unlike)} rows in dataset order are not rewordings of the question at their position "
                f"(similarity below {MIN_SIMILARITY}, or another question as close): " + _listing(unlike),
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
        scores: dict[int, tuple[float, float]] = {}
        if not complete:
            reason = self.order_refusal()
            if reason is not None:
                raise self.unaligned_error(reason)
            scores = self.by_order()
        by_id: dict[str, AlignedPrediction] = {}
        for i, p in enumerate(self.predictions):
            j, rule = self.matched.get(i, (i, "order"))
            own, other = scores.get(i, (None, None))
            by_id[self.records[j]["id"]] = AlignedPrediction(p, rule, own, other)
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
