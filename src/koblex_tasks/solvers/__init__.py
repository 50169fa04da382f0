"""KoBLEX solvers: one file per method, sharing `_common` and the `ProvisionEvidence` record."""

from koblex_tasks.solvers.chain_of_thought import chain_of_thought
from koblex_tasks.solvers.evidence import ProvisionEvidence
from koblex_tasks.solvers.one_time_retrieval import one_time_retrieval
from koblex_tasks.solvers.parser import parser
from koblex_tasks.solvers.replay import replay
from koblex_tasks.solvers.standard_prompting import standard_prompting

__all__ = [
    "ProvisionEvidence",
    "chain_of_thought",
    "one_time_retrieval",
    "parser",
    "replay",
    "standard_prompting",
]
