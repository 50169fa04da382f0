"""KoBLEX solvers: one file per method of the paper's Table 2, plus `replay` of released predictions.

`_common` holds what every KoBLEX solver shares (the `ProvisionEvidence` record, the official question, BM25
top-k with optional reranking, the final answer call), `_multihop` what the five multi-hop baselines share
(`MultihopRun`: a sample's recorded retrieval, question and prompts).
"""

from koblex_tasks.solvers.koblex.beamaggr import beamaggr
from koblex_tasks.solvers.koblex.chain_of_thought import chain_of_thought
from koblex_tasks.solvers.koblex.flare import flare
from koblex_tasks.solvers.koblex.ircot import ircot
from koblex_tasks.solvers.koblex.one_time_retrieval import one_time_retrieval
from koblex_tasks.solvers.koblex.parser import parser
from koblex_tasks.solvers.koblex.probtree import probtree
from koblex_tasks.solvers.koblex.replay import replay
from koblex_tasks.solvers.koblex.self_ask import self_ask
from koblex_tasks.solvers.koblex.standard_prompting import standard_prompting

# Solvers that retrieve nothing: a task built with one of them loads no corpus and needs no reranker.
RETRIEVAL_FREE_SOLVERS = frozenset(
    {"koblex_tasks/standard_prompting", "koblex_tasks/chain_of_thought", "koblex_tasks/replay"}
)

__all__ = [
    "RETRIEVAL_FREE_SOLVERS",
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
