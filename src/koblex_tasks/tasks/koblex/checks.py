"""Checks the KoBLEX task runs when it is built, before any model call: one clear line per problem.

Every check raises `SetupError`, which the `inspect` command prints as its message alone (no traceback);
misspelt names get the closest known one (`difflib`). The reranker check looks only at what is installed and
at the local Hugging Face cache (plus a ~3 s reachability probe), so a missing model fails in seconds, not
after a minute of download retries.
"""

import difflib
import importlib.util
from collections.abc import Collection, Iterable
from pathlib import Path

from koblex_tasks.errors import SetupError
from koblex_tasks.hub import hub_unavailable

RERANKER_ALIASES = ("none", "bge", "paper")
RERANKER_OFF = "-T reranker=none"
RERANK_INSTALL = "pip install 'koblex-tasks[rerank]'"
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest choice, or '' when none is close."""
    close = difflib.get_close_matches(str(value), list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_choice(name: str, value: object, choices: Collection[str]) -> None:
    if value not in choices:
        raise SetupError(
            f"KoBLEX: {name}={value!r} is not one of {', '.join(sorted(choices))}{did_you_mean(str(value), choices)}"
        )


def check_unknown_args(unknown: Iterable[str], known: Collection[str]) -> None:
    """Task arguments the task does not take (Inspect always passes `model`, which is ignored)."""
    for name in unknown:
        if name != "model":
            raise SetupError(
                f"KoBLEX: unknown task argument -T {name}{did_you_mean(name, known)}; "
                f"known: {', '.join(sorted(known))}"
            )


def check_hops(hops: int | list[int] | None, present: list[int]) -> set[int] | None:
    """The hop counts to keep; each must occur in the data."""
    if hops is None:
        return None
    wanted = {hops} if isinstance(hops, int) else set(hops)
    missing = sorted(h for h in wanted if h not in present)
    if missing or not wanted:
        raise SetupError(
            f"KoBLEX: hops={hops!r}: no question has {', '.join(map(str, missing)) or 'no'} gold provisions "
            f"(hop counts present: {', '.join(map(str, present))})"
        )
    return wanted


def check_file(option: str, path: str | None, what: str) -> None:
    if path is not None and not Path(path).is_file():
        raise SetupError(f"KoBLEX: -T {option}={path}: {what} not found")


def check_reranker(name: str, model_id: str) -> None:
    """The cross-encoder `model_id` (named `name` by the user) can be loaded: extra installed, weights at hand.

    A local directory must hold a `config.json`; a hub id must be in the local cache, or the hub reachable
    (the weights then download on first use).
    """
    if name == "none":
        return
    if "/" not in model_id and not Path(model_id).exists():
        raise SetupError(
            f"KoBLEX: unknown reranker {name!r}{did_you_mean(name, RERANKER_ALIASES)}: use none, bge (the "
            "paper's), a Hugging Face id (org/name) or a local model directory"
        )
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        raise SetupError(
            f"KoBLEX: the reranker {model_id} needs {' and '.join(missing)}: {RERANK_INSTALL}, "
            f"or run without reranking: {RERANKER_OFF}"
        )
    local = Path(model_id)
    if local.exists():
        if not (local / "config.json").is_file():
            raise SetupError(
                f"KoBLEX: reranker directory {model_id} has no config.json; or use {RERANKER_OFF}"
            )
        return
    if weights_cached(model_id):
        return
    reason = hub_unavailable()
    if reason:
        raise SetupError(
            f"KoBLEX: the reranker weights {model_id} are not in the local Hugging Face cache and {reason}: "
            f"download them once (hf download {model_id}) or run without reranking: {RERANKER_OFF}"
        )


def weights_cached(model_id: str) -> bool:
    """config.json and a weights file of `model_id` are in the local Hugging Face cache (no network)."""
    from huggingface_hub import try_to_load_from_cache

    def cached(filename: str) -> bool:
        return isinstance(try_to_load_from_cache(model_id, filename), str)

    return cached("config.json") and any(cached(f) for f in WEIGHT_FILES)
