"""LEGIT scorers: the issue-tree rubric, with a verdict per issue node from a judge or from released verdicts.

`arithmetic` (verdicts -> 0-10 score, both rules, the official scripts' arithmetic behind a switch), `judging`
(asking the judge about one node), `verdicts` (released verdicts in place of a judge), `rubric` (the scorer and
`rederive`), `metrics` (the pooled judge-failure rate).
"""

from koblex_tasks.scorers.legit.rubric import legit_rubric

__all__ = ["legit_rubric"]
