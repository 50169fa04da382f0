"""Everything the Inspect registry must see under the `koblex_tasks/` namespace."""

# ruff: noqa: F401
from koblex_tasks.corpus.tool import search_statutes
from koblex_tasks.legit import legit, legit_predict, legit_rag, legit_replay, legit_rubric
from koblex_tasks.replay_model import ReplayModel
from koblex_tasks.scorers import lf_eval, provision_match, token_f1
from koblex_tasks.solvers import (
    beamaggr,
    chain_of_thought,
    flare,
    ircot,
    one_time_retrieval,
    parser,
    probtree,
    replay,
    self_ask,
    standard_prompting,
)
from koblex_tasks.tasks import koblex
from koblex_tasks.testing.mock_provider import KoblexMock
