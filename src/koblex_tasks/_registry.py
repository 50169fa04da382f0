"""Everything the Inspect registry must see under the `koblex_tasks/` namespace."""

# ruff: noqa: F401
from koblex_tasks.corpus.tool import search_statutes
from koblex_tasks.errors import keep_refusals_visible
from koblex_tasks.providers.koblexmock import KoblexMock
from koblex_tasks.providers.replay import ReplayModel
from koblex_tasks.scorers import legit_rubric, lf_eval, provision_match, token_f1
from koblex_tasks.solvers import (
    beamaggr,
    chain_of_thought,
    flare,
    ircot,
    legit_predict,
    legit_rag,
    legit_replay,
    legit_verdicts,
    one_time_retrieval,
    parser,
    probtree,
    replay,
    require_grader,
    self_ask,
    standard_prompting,
)
from koblex_tasks.tasks.koblex.task import koblex
from koblex_tasks.tasks.legit.task import legit

keep_refusals_visible()
