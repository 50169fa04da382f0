"""Each retrieval the retriever runs, recorded in the running sample's events (Inspect's transcript).

The leaderboard checks a run against these records (`logs.event_rules`): a predicted provision must be one a
recorded retrieval returned, and a gold provision's text may reach the model only after a retrieval returned
it. The retriever writes them, not the solver, so the rule is the same for every solver that retrieves
through it. The retrieval path alone never imports Inspect: outside a run (Inspect not loaded) or outside a
sample nothing is recorded.
"""

import sys
from typing import Any

# The `source` of the transcript's info events that record one retrieval (what the board reads back).
RETRIEVAL_EVENT = "koblex_tasks/retrieval"
RETRIEVAL_EVENT_VERSION = 1


def record_retrieval(data: dict[str, Any]) -> bool:
    """Add one retrieval to the running sample's events; False outside a sample (or before Inspect loaded)."""
    if "inspect_ai" not in sys.modules:
        return False
    from koblex_tasks import _inspect_compat

    return _inspect_compat.record_info(RETRIEVAL_EVENT, {"version": RETRIEVAL_EVENT_VERSION, **data})
