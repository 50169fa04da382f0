"""Checks the KoBLEX task runs when it is built, before any model call: one clear line per problem.

The argument checks every task shares are `CHECKS` (`tasks/checks.py`); here are KoBLEX's own: hop counts and
the reranker. The reranker check looks only at what is installed and at the local Hugging Face cache (plus a
~3 s reachability probe), so a missing model fails in seconds, not after a minute of download retries.
"""

import importlib.util
from pathlib import Path

from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.corpus.rerank import TEST_RERANKERS
from koblex_tasks.hub import hub_unavailable
from koblex_tasks.tasks.checks import ArgumentChecks, did_you_mean

RERANKER_ALIASES = ("none", "bge", "paper")
RERANKER_OFF = "-T reranker=none"
RERANK_INSTALL = "pip install 'koblex-tasks[rerank]'"
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")


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


def check_reranker(name: str, model_id: str) -> None:
    """The cross-encoder `model_id` (named `name` by the user) can be loaded: extra installed, weights at hand.

    A local directory must hold a `config.json`; a hub id must be in the local cache, or the hub reachable
    (the weights then download on first use).
    """
    if name == "none" or name in TEST_RERANKERS:  # a test stub has no weights to check
        return
    if "/" not in model_id and not Path(model_id).exists():
        raise CHECKS.error(
            f"unknown reranker {name!r}{did_you_mean(name, RERANKER_ALIASES)}: use none, bge (the "
            "paper's), a Hugging Face id (org/name) or a local model directory"
        )
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        raise CHECKS.error(
            f"the reranker {model_id} needs {' and '.join(missing)}: {RERANK_INSTALL}, "
            f"or run without reranking: {RERANKER_OFF}"
        )
    local = Path(model_id)
    if local.exists():
        if not (local / "config.json").is_file():
            raise CHECKS.error(f"reranker directory {model_id} has no config.json; or use {RERANKER_OFF}")
        return
    if weights_cached(model_id):
        return
    reason = hub_unavailable()
    if reason:
        raise CHECKS.error(
            f"the reranker weights {model_id} are not in the local Hugging Face cache and {reason}: "
            f"download them once (hf download {model_id}) or run without reranking: {RERANKER_OFF}"
        )


def weights_cached(model_id: str) -> bool:
    """config.json and a weights file of `model_id` are in the local Hugging Face cache (no network)."""
    from huggingface_hub import try_to_load_from_cache

    def cached(filename: str) -> bool:
        return isinstance(try_to_load_from_cache(model_id, filename), str)

    return cached("config.json") and any(cached(f) for f in WEIGHT_FILES)
