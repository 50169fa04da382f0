"""LEGIT judge-verdict files of the release: `results/reasoning_tasks_<generator>_evaluator_<judge>.jsonl`.

One row per test record, written by the official evaluation script:
`{"doc_id", "response", "evaluator_model", "evaluation_result": {"<issue id>": {"rationales",
"contains_issue", "correct_conclusion", "score"}, ...}, "score"}` (the root issue has id ""). The
`evaluation_result` keeps the order in which the script judged the issues, which is the order it summed
their scores in.

The file's *shape* is checked strictly here (a malformed row is a DataError naming file and line). What a
row's verdicts say (missing or extra issue ids, non-boolean labels) is left to the scorer, which leaves such
a row unscored and says why (`scorers/legit/verdicts.py`).
"""

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from koblex_tasks.corpus.cache import file_sha256
from koblex_tasks.data.legit.responses import RELEASE_PREFIX, response_fields
from koblex_tasks.data.legit.rows import read_by_doc
from koblex_tasks.errors import DataError
from koblex_tasks.jsonl import read_once

EVALUATOR_INFIX = "_evaluator_"


@dataclass(frozen=True)
class VerdictRow:
    doc_id: str
    response: str
    evaluator_model: str
    evaluation_result: dict[str, dict[str, Any]]  # issue id -> the judge's record, in the file's order
    score: float  # the stored total
    line: int

    def as_metadata(self, file: str) -> dict[str, Any]:
        """What the solver hands the scorer (sample metadata `replayed_verdicts`)."""
        return {
            "file": file,
            "line": self.line,
            "evaluator_model": self.evaluator_model,
            "evaluation_result": self.evaluation_result,
            "score": self.score,
        }


@dataclass(frozen=True)
class VerdictFile:
    path: str
    rows: dict[str, VerdictRow]  # doc_id -> row, in file order
    evaluator_model: str
    generator: str  # from the file name
    judge_in_name: str | None  # the `_evaluator_<judge>` part of the file name, if any
    sha256: str

    @property
    def judge(self) -> str:
        """The judge as logs name it: the replay label of the file's `evaluator_model`."""
        return f"replay/{self.evaluator_model}"

    def notes(self) -> list[str]:
        alias = self.evaluator_model.split("/")[-1]  # the official script names its file after this
        if self.judge_in_name is not None and self.judge_in_name != alias:
            return [
                f"the file name says judge {self.judge_in_name!r}, its rows say {self.evaluator_model!r} "
                "(the rows are used)"
            ]
        return []


def split_verdict_name(path: str | Path) -> tuple[str, str | None]:
    """`reasoning_tasks_gpt-4.1_evaluator_gemini-2.0-flash-001.jsonl` -> ("gpt-4.1", "gemini-2.0-flash-001").

    The judge is the part after the *last* `_evaluator_` (generator names may contain the infix themselves,
    e.g. `gemma3-4b_evaluator_gemma3-27b_fullreward`); a name without it is all generator.
    """
    stem = Path(path).stem
    stem = stem[len(RELEASE_PREFIX) :] if stem.startswith(RELEASE_PREFIX) else stem
    generator, infix, judge = stem.rpartition(EVALUATOR_INFIX)
    return (generator, judge) if infix and generator else (stem, None)


def _row(obj: dict[str, Any], where: str, line: int) -> tuple[str, VerdictRow]:
    doc_id, response = response_fields(obj, where, line)
    evaluator = obj.get("evaluator_model")
    if not isinstance(evaluator, str) or not evaluator:
        raise DataError(where, line, f"missing non-empty string field 'evaluator_model' (doc {doc_id!r})")
    result = obj.get("evaluation_result")
    if not isinstance(result, dict):
        raise DataError(
            where, line, f"field 'evaluation_result' must be an object of issue verdicts (doc {doc_id!r})"
        )
    for issue_id, record in result.items():
        if not isinstance(record, dict):
            raise DataError(where, line, f"verdict for issue {issue_id!r} must be an object (doc {doc_id!r})")
    score = obj.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise DataError(where, line, f"field 'score' must be a finite number, got {score!r} (doc {doc_id!r})")
    return doc_id, VerdictRow(doc_id, response, evaluator, result, float(score), line)


@read_once
def load_verdicts(path: str | Path) -> VerdictFile:
    """Read a released evaluator file strictly: one judge, unique doc_ids, well-formed rows.

    Read (and hashed) once per process for an unchanged file: `koblex replay --verdicts`, the task and the
    verdict solver share it."""
    parsed = read_by_doc(path, _row, "verdict rows")
    rows = {doc_id: row for doc_id, (_, row) in parsed.items()}
    evaluators: dict[str, int] = {}
    for row in rows.values():
        evaluators.setdefault(row.evaluator_model, row.line)
    if len(evaluators) > 1:
        seen = ", ".join(f"{m!r} (from line {n})" for m, n in evaluators.items())
        raise DataError(
            str(path), None, f"rows name more than one evaluator_model: {seen}; one judge per file"
        )
    generator, judge_in_name = split_verdict_name(path)
    return VerdictFile(
        path=str(path),
        rows=rows,
        evaluator_model=next(iter(evaluators)),
        generator=generator,
        judge_in_name=judge_in_name,
        sha256=file_sha256(Path(path)),
    )


def check_docs_known(verdicts: VerdictFile, known: set[str], data_source: str) -> None:
    """Every row must grade a document of the test data: a row for an unknown document is a clear error."""
    unknown = [doc for doc in verdicts.rows if doc not in known]
    if unknown:
        shown = ", ".join(repr(d) for d in unknown[:5]) + (
            f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        )
        raise DataError(
            verdicts.path,
            verdicts.rows[unknown[0]].line,
            f"{len(unknown)} row(s) grade documents that are not in {data_source}: {shown}",
        )
