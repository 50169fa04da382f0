"""Issue-level labels (LEGIT issue trees) from a strict CSV or from any record source.

A *labeller set* is what one labeller (a lawyer group, an LLM judge) said about each issue node. It is a
mapping from a unit key ``(generator, doc_id, issue_id)`` to ``(contains_issue, correct_conclusion,
score)``, so that humans and judges can be compared the same way whatever file they came from.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from koblex_tasks.errors import DataError, csv_errors

__all__ = [
    "LABEL_COLUMNS",
    "LabelRow",
    "LabellerSet",
    "UnitKey",
    "UnitLabels",
    "is_root",
    "labeller_from_records",
    "labellers_by_group",
    "load_labels",
]

#: Columns a labels CSV must have (extra columns are ignored); the order is that of ``human_labels.csv``.
LABEL_COLUMNS: tuple[str, ...] = (
    "group",
    "generator",
    "doc_id",
    "issue_id",
    "annotator",
    "contains_issue",
    "correct_conclusion",
    "score",
)

#: ``(generator, doc_id, issue_id)``; ``issue_id == ""`` is the root node (final order / disposition).
UnitKey = tuple[str, str, str]


class UnitLabels(NamedTuple):
    """What one labeller said about one issue node."""

    contains_issue: int
    correct_conclusion: int
    score: float


@dataclass(frozen=True, slots=True)
class LabelRow:
    """One row of a labels CSV: one labeller group's verdict on one issue node."""

    group: str
    generator: str
    doc_id: str
    issue_id: str
    annotator: str
    contains_issue: int
    correct_conclusion: int
    score: float

    @property
    def unit(self) -> UnitKey:
        return (self.generator, self.doc_id, self.issue_id)

    @property
    def labels(self) -> UnitLabels:
        return UnitLabels(self.contains_issue, self.correct_conclusion, self.score)


class LabellerSet(Mapping[UnitKey, UnitLabels]):
    """Read-only mapping unit key -> labels, with a display name (``"group 1"``, ``"judge gpt-4.1"``)."""

    __slots__ = ("_units", "name")

    def __init__(self, name: str, units: Mapping[UnitKey, UnitLabels]) -> None:
        self.name = name
        self._units: dict[UnitKey, UnitLabels] = dict(units)

    def __getitem__(self, key: UnitKey) -> UnitLabels:
        return self._units[key]

    def __iter__(self) -> Iterator[UnitKey]:
        return iter(self._units)

    def __len__(self) -> int:
        return len(self._units)

    def __repr__(self) -> str:
        return f"LabellerSet({self.name!r}, {len(self)} units)"

    def filter(self, keep: Callable[[UnitKey], bool], name: str | None = None) -> LabellerSet:
        """Subset of units (e.g. root nodes only) for sensitivity analyses."""
        return LabellerSet(name or self.name, {k: v for k, v in self._units.items() if keep(k)})


def is_root(unit: UnitKey) -> bool:
    """The root node of an issue tree (final order / disposition) has the empty issue id."""
    return unit[2] == ""


def _parse_flag(text: str, column: str) -> int:
    if text not in ("0", "1"):
        raise ValueError(f"{column} must be 0 or 1, got {text!r}")
    return int(text)


def _parse_score(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"score must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"score must be a finite number, got {text!r}")
    return value


def load_labels(path: str | Path) -> list[LabelRow]:
    """Read a labels CSV strictly: any malformed row is a :class:`DataError` (a ``ValueError``) naming
    the file and line, because a silently skipped or mis-parsed label changes every agreement figure."""
    path = Path(path)
    where = str(path)
    rows: list[LabelRow] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle)
        with csv_errors(where, reader):
            header = next(reader, None)
            if header is None:
                raise DataError(where, 1, "empty file: expected a header line")
            missing = [c for c in LABEL_COLUMNS if c not in header]
            if missing:
                raise DataError(where, 1, f"missing column(s) {', '.join(missing)}; header is {header}")
            dupes = sorted({c for c in header if header.count(c) > 1})
            if dupes:
                raise DataError(where, 1, f"duplicate column(s) {', '.join(dupes)}")
            col = {name: header.index(name) for name in LABEL_COLUMNS}
            for fields in reader:
                line = reader.line_num
                if not fields:
                    continue  # blank line
                if len(fields) != len(header):
                    raise DataError(where, line, f"expected {len(header)} fields, got {len(fields)}")
                value = {name: fields[i] for name, i in col.items()}
                for name in ("group", "generator", "doc_id"):
                    if not value[name]:
                        raise DataError(where, line, f"{name} is empty")
                try:
                    row = LabelRow(
                        group=value["group"],
                        generator=value["generator"],
                        doc_id=value["doc_id"],
                        issue_id=value["issue_id"],
                        annotator=value["annotator"],
                        contains_issue=_parse_flag(value["contains_issue"], "contains_issue"),
                        correct_conclusion=_parse_flag(value["correct_conclusion"], "correct_conclusion"),
                        score=_parse_score(value["score"]),
                    )
                except ValueError as exc:
                    raise DataError(where, line, str(exc)) from None
                key = (row.group, *row.unit)
                if key in seen:
                    raise DataError(
                        where,
                        line,
                        f"duplicate key (group, generator, doc_id, issue_id) {key}, first on line {seen[key]}",
                    )
                seen[key] = line
                rows.append(row)
    return rows


def _group_sort_key(group: str) -> tuple[int, int | str]:
    return (0, int(group)) if group.isdigit() else (1, group)


def labellers_by_group(rows: Iterable[LabelRow]) -> dict[str, LabellerSet]:
    """One labeller set per ``group`` value, in numeric group order (``"1"`` before ``"2"``)."""
    units: dict[str, dict[UnitKey, UnitLabels]] = {}
    for row in rows:
        units.setdefault(row.group, {})[row.unit] = row.labels
    return {g: LabellerSet(f"group {g}", units[g]) for g in sorted(units, key=_group_sort_key)}


def _record_flag(value: Any, field: str) -> int:
    # Judges write JSON booleans; CSV-like sources write 0/1. Anything else (2, "yes", None) is an error.
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value in ("0", "1"):
        return int(value)
    raise ValueError(f"{field} must be 0/1 or true/false, got {value!r}")


def _record_score(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"score must be a number, got {value!r}")
    if isinstance(value, str):
        return _parse_score(value)
    if not math.isfinite(value):
        raise ValueError(f"score must be a finite number, got {value!r}")
    return float(value)


def labeller_from_records(name: str, records: Iterable[LabelRow | Mapping[str, Any]]) -> LabellerSet:
    """Build a labeller set from a non-CSV source (e.g. an eval log's judge output).

    Each record is a :class:`LabelRow` or a mapping with ``generator``, ``doc_id``, ``issue_id`` (``None``
    or ``""`` = root), ``contains_issue``, ``correct_conclusion`` (0/1 or bool) and ``score``. Records are
    validated as strictly as CSV rows; errors name the record index, since there is no file line.
    """
    units: dict[UnitKey, UnitLabels] = {}
    for index, record in enumerate(records):
        where = f"{name} record {index}"
        try:
            if isinstance(record, LabelRow):
                key, labels = record.unit, record.labels
            else:
                for field in ("generator", "doc_id", "contains_issue", "correct_conclusion", "score"):
                    if field not in record:
                        raise ValueError(f"missing field {field!r}")
                issue_id = record.get("issue_id")
                key = (
                    str(record["generator"]),
                    str(record["doc_id"]),
                    "" if issue_id is None else str(issue_id),
                )
                labels = UnitLabels(
                    _record_flag(record["contains_issue"], "contains_issue"),
                    _record_flag(record["correct_conclusion"], "correct_conclusion"),
                    _record_score(record["score"]),
                )
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if key in units:
            raise ValueError(f"{where}: duplicate unit (generator, doc_id, issue_id) {key}")
        units[key] = labels
    return LabellerSet(name, units)
