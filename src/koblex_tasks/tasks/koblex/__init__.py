"""KoBLEX, wired: its spec, task, solvers, scorers' re-derivations, replay and mock replies in one value.

`task.py` assembles dataset, default solver (the paper's protocol) and scorers; `checks.py` checks the task's
arguments; `replay.py` turns released predictions into scored logs; `mock.py` answers KoBLEX's prompts for the
scripted model. Everything else in the package reads `BENCHMARK` (through `koblex_tasks.tasks.benchmarks()`).
"""

from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.scorers.koblex.answer import sample_answer
from koblex_tasks.scorers.koblex.funnel import rederive as rederive_funnel
from koblex_tasks.scorers.koblex.lf_eval import rederive as rederive_lf_eval
from koblex_tasks.scorers.koblex.provision_match import rederive as rederive_provision_match
from koblex_tasks.scorers.koblex.token_f1 import rederive as rederive_token_f1
from koblex_tasks.solvers import koblex as koblex_solvers
from koblex_tasks.tasks.benchmark import Benchmark
from koblex_tasks.tasks.koblex.mock import koblex_reply
from koblex_tasks.tasks.koblex.replay import REPLAY
from koblex_tasks.tasks.koblex.task import koblex

BENCHMARK = Benchmark.wire(
    spec=KOBLEX,
    solver_package=koblex_solvers,
    tasks=(koblex,),
    rederive={
        "provision_match": rederive_provision_match,
        "token_f1": rederive_token_f1,
        "lf_eval": rederive_lf_eval,
        "retrieval_funnel": rederive_funnel,
    },
    replay=REPLAY,
    mock=koblex_reply,
    answer=sample_answer,
)
