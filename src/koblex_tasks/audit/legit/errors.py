"""Error attribution (the LEGIT paper's Fig. 7): is a parent issue decided right, given how its children fared?

For every issue node with children (the root included), from the judge's verdicts on one answer:

* `all_correct`: every child covered and correctly concluded;
* `deduction`: at least one child covered but wrongly concluded, none missing (the model reasoned from the
  right sub-issues to a wrong step: a deduction error);
* `decomposition`: at least one child not covered, none covered-but-wrong (the model never split the issue
  into the court's sub-issues: a decomposition error);
* `both`: a child covered but wrong and another missing.

The four cells partition the parents, so nothing is counted twice and no precedence is hidden. Each cell
reports how often the parent itself was concluded correctly (`correct_conclusion`) and how often covered and
correct (what earns it points). A parent is left out (and counted) when it or a child has no verdict.
Grouped overall, by parent depth (root 0, "1" 1, "1.2" 2) and by the document's difficulty.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, read_eval_log

from koblex_tasks.audit.legit.judge_labels import SCORER_NAME, find_score
from koblex_tasks.benchmarks.legit.issues import issue_path, parent_id
from koblex_tasks.benchmarks.legit.spec import DIFFICULTIES
from koblex_tasks.errors import DataError
from koblex_tasks.scorers.legit.arithmetic import Verdict
from koblex_tasks.scorers.legit.rubric import label_from_record

__all__ = [
    "CATEGORIES",
    "Cell",
    "ErrorTable",
    "ParentCase",
    "TreeVerdicts",
    "attribute",
    "classify",
    "trees_from_log",
]

CATEGORIES: tuple[str, ...] = ("all_correct", "deduction", "decomposition", "both")


@dataclass(frozen=True, slots=True)
class TreeVerdicts:
    """One judged answer: its tree (ids in order), the verdict per node (None = none), its difficulty."""

    doc_id: str
    difficulty: str
    issue_ids: tuple[str, ...]
    labels: Mapping[str, Verdict | None]


@dataclass(frozen=True, slots=True)
class ParentCase:
    doc_id: str
    difficulty: str
    parent: str
    depth: int
    category: str
    correct: bool  # the parent's correct_conclusion
    covered_correct: bool  # contains_issue and correct_conclusion


@dataclass(slots=True)
class Cell:
    n: int = 0
    correct: int = 0
    covered_correct: int = 0

    @property
    def correct_rate(self) -> float | None:
        return self.correct / self.n if self.n else None

    @property
    def covered_correct_rate(self) -> float | None:
        return self.covered_correct / self.n if self.n else None

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "correct_rate": self.correct_rate,
            "covered_correct_rate": self.covered_correct_rate,
        }


@dataclass(slots=True)
class ErrorTable:
    """Cells per group: `"all"`, `"depth 0"`, `"depth 1"`, ..., `"easy"`, ...; each maps category -> Cell."""

    groups: dict[str, dict[str, Cell]] = field(default_factory=dict)
    answers: int = 0
    parents: int = 0
    skipped: int = 0  # parents left out: they or a child had no verdict

    def to_dict(self) -> dict[str, Any]:
        return {
            "categories": list(CATEGORIES),
            "answers": self.answers,
            "parents": self.parents,
            "skipped_parents": self.skipped,
            "groups": {
                g: {c: cell.to_dict() for c, cell in cells.items()} for g, cells in self.groups.items()
            },
        }


def _category(children: Sequence[Verdict]) -> str:
    wrong = any(c.covered_but_wrong for c in children)
    missing = any(not c.contains_issue for c in children)
    if wrong and missing:
        return "both"
    return "deduction" if wrong else "decomposition" if missing else "all_correct"


def classify(tree: TreeVerdicts) -> tuple[list[ParentCase], int]:
    """Every parent of one tree with its category; and how many parents were left out (no verdict)."""
    children: dict[str, list[str]] = defaultdict(list)
    for issue_id in tree.issue_ids:
        parent = parent_id(issue_id)
        if parent is not None:
            children[parent].append(issue_id)
    cases: list[ParentCase] = []
    skipped = 0
    for parent in tree.issue_ids:
        kids = children.get(parent)
        if not kids:
            continue
        verdict = tree.labels.get(parent)
        kid_verdicts = [tree.labels.get(k) for k in kids]
        if verdict is None or any(v is None for v in kid_verdicts):
            skipped += 1
            continue
        cases.append(
            ParentCase(
                doc_id=tree.doc_id,
                difficulty=tree.difficulty,
                parent=parent,
                depth=len(issue_path(parent)),
                category=_category([v for v in kid_verdicts if v is not None]),
                correct=verdict.correct_conclusion,
                covered_correct=verdict.contains_issue and verdict.correct_conclusion,
            )
        )
    return cases, skipped


def _group_order(name: str) -> tuple[int, int, str]:
    if name == "all":
        return (0, 0, name)
    if name.startswith("depth "):
        return (1, int(name.split()[1]), name)
    return (2, DIFFICULTIES.index(name) if name in DIFFICULTIES else len(DIFFICULTIES), name)


def attribute(trees: Iterable[TreeVerdicts]) -> ErrorTable:
    """The error-attribution table over judged answers."""
    table = ErrorTable()
    groups: dict[str, dict[str, Cell]] = defaultdict(lambda: {c: Cell() for c in CATEGORIES})
    for tree in trees:
        table.answers += 1
        cases, skipped = classify(tree)
        table.skipped += skipped
        for case in cases:
            table.parents += 1
            for group in ("all", f"depth {case.depth}", case.difficulty):
                cell = groups[group][case.category]
                cell.n += 1
                cell.correct += case.correct
                cell.covered_correct += case.covered_correct
    table.groups = {g: groups[g] for g in sorted(groups, key=_group_order)}
    return table


def trees_from_log(log: str | Path | EvalLog, scorer: str = SCORER_NAME) -> Iterator[TreeVerdicts]:
    """The judged trees of a LEGIT log: the tree from the sample, the verdicts its rubric score records
    (a live judge's or replayed released verdicts alike)."""
    log = log if isinstance(log, EvalLog) else read_eval_log(str(log))
    where = str(log.location)
    if log.samples is None:
        raise DataError(where, None, "the log has no samples (header-only read?)")
    for sample in log.samples:
        if not sample.scores:
            continue
        score = find_score(sample.scores, where, scorer)
        meta, sample_meta = score.metadata or {}, sample.metadata or {}
        tree, issues = sample_meta.get("issues"), meta.get("issues")
        if not isinstance(tree, list) or not isinstance(issues, Mapping):
            raise DataError(where, None, f"sample {sample.id!r}: no issue tree or no per-issue verdicts")
        try:
            labels = {str(i): label_from_record(r) for i, r in issues.items()}
        except ValueError as exc:
            raise DataError(where, None, f"sample {sample.id!r}: {exc}") from None
        yield TreeVerdicts(
            doc_id=str(meta.get("doc_id") or sample_meta.get("doc_id") or sample.id),
            difficulty=str(sample_meta.get("difficulty") or meta.get("difficulty")),
            issue_ids=tuple(str(node["id"]) for node in tree),
            labels=labels,
        )


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def format_markdown(table: ErrorTable, title: str = "LEGIT error attribution") -> str:
    """One Markdown table: per group and children's state, parents counted and how often decided right."""
    head = "| group | " + " | ".join(f"{c} (n, correct, covered & correct)" for c in CATEGORIES) + " |"
    lines = [
        f"### {title}",
        "",
        f"{table.answers} answers, {table.parents} parent issues"
        + (f", {table.skipped} left out (no verdict on them or a child)" if table.skipped else ""),
        "",
        head,
        "|" + "---|" * (len(CATEGORIES) + 1),
    ]
    for group, cells in table.groups.items():
        row = [f"{c.n}, {_pct(c.correct_rate)}, {_pct(c.covered_correct_rate)}" for c in cells.values()]
        lines.append(f"| {group} | " + " | ".join(row) + " |")
    return "\n".join(lines)
