"""Warnings the package repeats for every run of a grid (each task says "no judge bound" while being built),
shown once per command."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterator
from contextlib import contextmanager

PACKAGE = "koblex_tasks"


class OncePerMessage(logging.Filter):
    """Let each distinct message through once: a warning every task gives while being built (e.g. "no
    judge bound") is said once for the grid, not once per run."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in self.seen:
            return False
        self.seen.add(message)
        return True


@contextmanager
def said_once() -> Iterator[None]:
    """While the block runs, each distinct message of the package's loggers is shown once (every run's task
    warns the same while being built, e.g. "no judge bound"). A logger's filter sees only its own records, so
    the filter goes on each of the package's loggers: the registry is imported first, so the loggers of the
    task modules (created when Inspect first imports them, which may be inside the block) exist by then."""
    importlib.import_module(f"{PACKAGE}._registry")
    loggers = [
        logger
        for name, logger in logging.Logger.manager.loggerDict.items()
        if isinstance(logger, logging.Logger) and (name == PACKAGE or name.startswith(PACKAGE + "."))
    ]
    once = OncePerMessage()
    for logger in loggers:
        logger.addFilter(once)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(once)
