"""LEGIT, wired: its spec, task, solvers, the rubric's re-derivation, replay and mock replies in one value.

`task.py` assembles dataset, default solver and the rubric judge; `checks.py` checks the task's arguments;
`replay.py` turns released responses and verdicts into scored logs; `mock.py` answers the issue judge for the
scripted model. Everything else in the package reads `BENCHMARK` (through `koblex_tasks.tasks.benchmarks()`).
"""

from koblex_tasks.benchmarks.legit.spec import LEGIT
from koblex_tasks.scorers.legit.likert import rederive as rederive_likert
from koblex_tasks.scorers.legit.rubric import rederive as rederive_rubric
from koblex_tasks.solvers import legit as legit_solvers
from koblex_tasks.tasks.benchmark import Benchmark
from koblex_tasks.tasks.legit.mock import legit_reply
from koblex_tasks.tasks.legit.replay import REPLAY
from koblex_tasks.tasks.legit.task import legit

BENCHMARK = Benchmark.wire(
    spec=LEGIT,
    solver_package=legit_solvers,
    tasks=(legit,),
    rederive={"legit_rubric": rederive_rubric, "legit_likert": rederive_likert},
    replay=REPLAY,
    mock=legit_reply,
)
