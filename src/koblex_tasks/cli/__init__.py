"""The `koblex` command: replay, judge audit, leaderboard (thin front ends over the layers below)."""

from koblex_tasks.cli.main import main

__all__ = ["main"]
