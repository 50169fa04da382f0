"""LEGIT scorers: the issue-tree rubric, with a verdict per issue node from a judge or from released verdicts.

`arithmetic` (verdicts -> 0-10 score, both rules, the official scripts' arithmetic behind a switch), `judging`
(asking the judge about one node), `verdicts` (released verdicts in place of a judge), `rubric` (the scorer and
`rederive`), `likert` (the paper's Likert judge of the whole answer), `metrics` (the pooled judge-failure
rate).
"""

from koblex_tasks.scorers.legit.likert import legit_likert
from koblex_tasks.scorers.legit.rubric import legit_rubric

__all__ = ["legit_likert", "legit_rubric"]
