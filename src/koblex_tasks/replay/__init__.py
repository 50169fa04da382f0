"""Replay: released outputs (KoBLEX predictions, LEGIT responses) as ordinary eval logs, scored as usual.

`run.py` is the shared plumbing (the eval under a `replay/<generator>` label, the headline read back through
the spec); `koblex.py` and `legit.py` hold each benchmark's runner. The replay solvers themselves live with the
other solvers (`solvers/koblex/replay.py`, `solvers/legit/replay.py`).
"""
