"""The `koblex` command (click): replay, judge-audit, leaderboard; thin front ends over the layers below.

One exit-code rule for every command (applied once, in `cli/_base.py`):

- 0: success.
- 1: a rejected or failed input: the input was read but refused, or its run failed (a log the leaderboard
  rejects, a replay whose eval did not finish).
- 2: a usage error (bad option or argument; click prints the usage), or an input that cannot be read or is
  invalid (missing or malformed file, unknown or ambiguous run, bad audit report).

An error prints one line `koblex <command>: error: <message>` on stderr, no traceback; `koblex --debug ...`
or `KOBLEX_DEBUG=1` adds it. The Python entry points (`main`, `leaderboard_main`, `judge_audit_main`) take
the arguments as a list and return the exit code instead of raising SystemExit.
"""

from koblex_tasks.cli.main import main

__all__ = ["main"]
