"""LEGIT (Korean legal judgment prediction graded on issue trees, arXiv 2512.01020) for Inspect AI."""

from koblex_tasks.legit.judge_labels import load_judge_labels_from_log
from koblex_tasks.legit.replay import legit_replay, run_legit_replay
from koblex_tasks.legit.rubric import legit_rubric
from koblex_tasks.legit.solvers import legit_predict, legit_rag, require_grader
from koblex_tasks.legit.task import legit

__all__ = [
    "legit",
    "legit_predict",
    "legit_rag",
    "legit_replay",
    "legit_rubric",
    "load_judge_labels_from_log",
    "require_grader",
    "run_legit_replay",
]
