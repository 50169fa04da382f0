"""Each benchmark's declarations, one folder per benchmark: the layer every other part may read.

- `<benchmark>/spec.py`: the benchmark's facts, once (task name and version, scorers and value keys, ranges,
  strata, headline, the paper's protocol, dataset fingerprints); `methods.py` its method grid.
- KoBLEX: `evidence.py` (the solvers' record, read by the scorers), `protocol.py` (what "paper" means).
- LEGIT: `issues.py` (the court's legal issue trees).

Plain data and types: nothing here imports another part of the package (only `koblex_tasks.spec`).
"""
