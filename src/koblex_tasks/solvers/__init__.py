"""KoBLEX solvers: one file per method, sharing `_common` / `_multihop` and the `ProvisionEvidence` record."""

from koblex_tasks.solvers.beamaggr import beamaggr
from koblex_tasks.solvers.chain_of_thought import chain_of_thought
from koblex_tasks.solvers.evidence import ProvisionEvidence
from koblex_tasks.solvers.flare import flare
from koblex_tasks.solvers.ircot import ircot
from koblex_tasks.solvers.one_time_retrieval import one_time_retrieval
from koblex_tasks.solvers.parser import parser
from koblex_tasks.solvers.probtree import probtree
from koblex_tasks.solvers.replay import replay
from koblex_tasks.solvers.self_ask import self_ask
from koblex_tasks.solvers.standard_prompting import standard_prompting

__all__ = [
    "ProvisionEvidence",
    "beamaggr",
    "chain_of_thought",
    "flare",
    "ircot",
    "one_time_retrieval",
    "parser",
    "probtree",
    "replay",
    "self_ask",
    "standard_prompting",
]
