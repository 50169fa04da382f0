"""Inspect tasks: KoBLEX (and LEGIT)."""

from koblex_tasks.tasks.koblex import koblex

__all__ = ["koblex"]
