"""Solvers: one folder per benchmark (`koblex/`, `legit/`), one file per method; shared helpers at this level.

- `common.py`: recorded (hashed) prompts, intermediate model calls, retrieval settings from the task (and
  the retrieval overrides every solver takes), the solver-argument check, the replayed output.
- `grader.py`: `require_grader`, the setup step that refuses to run a judged task without a judge.

Solvers leave what they retrieved and selected in a record on the sample; scorers read only that record.
"""

from koblex_tasks.solvers.grader import require_grader
from koblex_tasks.solvers.koblex import (
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
from koblex_tasks.solvers.legit import legit_predict, legit_rag, legit_replay, legit_verdicts

__all__ = [
    "beamaggr",
    "chain_of_thought",
    "flare",
    "ircot",
    "legit_predict",
    "legit_rag",
    "legit_replay",
    "legit_verdicts",
    "one_time_retrieval",
    "parser",
    "probtree",
    "replay",
    "require_grader",
    "self_ask",
    "standard_prompting",
]
