"""LEGIT scorers: the issue-tree rubric graded by a judge, one call per issue node."""

from koblex_tasks.scorers.legit.rubric import legit_rubric

__all__ = ["legit_rubric"]
