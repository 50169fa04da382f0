"""LEGIT issue trees: issue ids, real tree ancestry, and the `Issue` node the judge grades.

An issue tree is flattened into a list of nodes: every node has an `id` ("" for the root, the final order /
disposition; otherwise dot-separated positive integers such as "1.2.3"), a `summary`, a `claim` list of
`{claimer, content}`, `relevant_law` and `analysis` lists of strings and a `conclusion`.

Ancestry is real tree ancestry on the dot-separated parts: "1" is an ancestor of "1.2" but not of "10" or
"10.1" (the official scoring script's `startswith` test gets that wrong, see `scorers/legit/rubric.py`).
Difficulty is derived from the node count, root included: easy <= 4, medium 5-8, hard > 8.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from koblex_tasks.benchmarks.legit.spec import DIFFICULTIES

ROOT_ID = ""
_ISSUE_ID = re.compile(r"^[1-9][0-9]*(\.[1-9][0-9]*)*$")

__all__ = [
    "DIFFICULTIES",
    "ROOT_ID",
    "Claim",
    "Issue",
    "descendants",
    "difficulty_for",
    "is_ancestor",
    "issue_path",
    "issues_from_metadata",
    "parent_id",
]


def issue_path(issue_id: str) -> tuple[int, ...]:
    """`""` -> `()`, `"1.2.3"` -> `(1, 2, 3)`. Raises ValueError on anything else."""
    if issue_id == ROOT_ID:
        return ()
    if not _ISSUE_ID.match(issue_id):
        raise ValueError(f"bad issue id {issue_id!r}: expected '' or dot-separated positive integers")
    return tuple(int(part) for part in issue_id.split("."))


def parent_id(issue_id: str) -> str | None:
    """The parent's id ("1.2" -> "1", "1" -> ""), None for the root."""
    path = issue_path(issue_id)
    if not path:
        return None
    return ".".join(str(p) for p in path[:-1])


def is_ancestor(ancestor: str, descendant: str) -> bool:
    """True when `ancestor` is a proper ancestor of `descendant` in the tree ("1" of "1.2", not of "10")."""
    a, d = issue_path(ancestor), issue_path(descendant)
    return len(a) < len(d) and d[: len(a)] == a


def descendants(issue_id: str, ids: Iterable[str]) -> list[str]:
    """The proper descendants of `issue_id` among `ids`, in the given order."""
    return [other for other in ids if is_ancestor(issue_id, other)]


def difficulty_for(n_issues: int) -> str:
    """The paper's bins on the node count, root included."""
    if n_issues <= 4:
        return "easy"
    if n_issues <= 8:
        return "medium"
    return "hard"


@dataclass(frozen=True)
class Claim:
    claimer: str
    content: str


@dataclass(frozen=True)
class Issue:
    id: str
    summary: str
    claims: tuple[Claim, ...]
    relevant_law: tuple[str, ...]
    analysis: tuple[str, ...]
    conclusion: str

    @property
    def is_root(self) -> bool:
        return self.id == ROOT_ID

    def claims_text(self) -> str:
        """Claims as the official judge prompt shows them: `claimer: content`, one per line."""
        return "\n".join(f"{c.claimer}: {c.content}" for c in self.claims)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "summary": self.summary,
            "claim": [{"claimer": c.claimer, "content": c.content} for c in self.claims],
            "relevant_law": list(self.relevant_law),
            "analysis": list(self.analysis),
            "conclusion": self.conclusion,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Issue":
        """Rebuild from `as_dict` output (sample metadata); trusted input, no validation."""
        return cls(
            id=data["id"],
            summary=data["summary"],
            claims=tuple(Claim(c["claimer"], c["content"]) for c in data["claim"]),
            relevant_law=tuple(data["relevant_law"]),
            analysis=tuple(data["analysis"]),
            conclusion=data["conclusion"],
        )


def issues_from_metadata(metadata: dict[str, Any]) -> list[Issue]:
    """The tree a sample carries in its metadata (`issues`, as written by `Issue.as_dict`)."""
    return [Issue.from_dict(d) for d in metadata["issues"]]
