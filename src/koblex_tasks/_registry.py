"""Everything the Inspect registry must see under the `koblex_tasks/` namespace (the `inspect_ai` entry point).

Importing the wiring point imports every registered benchmark's tasks, solvers and scorers (each registers
itself where it is defined); the scripted `koblexmock/` provider and the `search_statutes` tool come along.
The CLI hook that keeps refusals to one visible line is installed last.
"""

# ruff: noqa: F401
from koblex_tasks.cli.refusals import keep_refusals_visible
from koblex_tasks.corpus.tool import search_statutes
from koblex_tasks.providers.koblexmock import KoblexMock
from koblex_tasks.solvers.grader import require_grader
from koblex_tasks.tasks import benchmarks

keep_refusals_visible()
