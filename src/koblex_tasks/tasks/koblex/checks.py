"""Checks the KoBLEX task runs when it is built, before any model call: one clear line per problem.

The argument checks every task shares are `CHECKS` (`tasks/checks.py`); here are KoBLEX's own: hop counts and
the reranker's name. Whether the reranker can run (`corpus.rerank.reranker_unavailable`) is asked only for a
solver that reranks: by the task for the solver it is given, and by the solver itself when an eval builds it
(`solvers.preflight.require_reranker`), since `--solver` replaces the task's solver after the task is built.
"""

from pathlib import Path

from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.corpus.rerank import TEST_RERANKERS, reranker_unavailable
from koblex_tasks.tasks.checks import ArgumentChecks, did_you_mean

RERANKER_ALIASES = ("none", "bge", "paper")


CHECKS = ArgumentChecks(KOBLEX.title)


def check_hops(hops: int | list[int] | None, present: list[int]) -> set[int] | None:
    """The hop counts to keep; each must occur in the data."""
    if hops is None:
        return None
    wanted = {hops} if isinstance(hops, int) else set(hops)
    missing = sorted(h for h in wanted if h not in present)
    if missing or not wanted:
        raise CHECKS.error(
            f"hops={hops!r}: no question has {', '.join(map(str, missing)) or 'no'} gold provisions "
            f"(hop counts present: {', '.join(map(str, present))})"
        )
    return wanted


def check_reranker(name: str) -> None:
    """The reranker `name` is a known alias, a Hugging Face id or a local directory, and can run here (extra
    installed, weights at hand: `corpus.rerank.reranker_unavailable`)."""
    if name == "none" or name in TEST_RERANKERS:  # a test stub has no weights to check
        return
    if name not in RERANKER_ALIASES and "/" not in name and not Path(name).exists():
        raise CHECKS.error(
            f"unknown reranker {name!r}{did_you_mean(name, RERANKER_ALIASES)}: use none, bge (the "
            "paper's), a Hugging Face id (org/name) or a local model directory"
        )
    problem = reranker_unavailable(name)
    if problem:
        raise CHECKS.error(problem)
