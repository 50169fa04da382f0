"""Reranking stage: `none`, the paper's cross-encoder (`dragonkue/bge-reranker-v2-m3-ko`), or a test stub.

The cross-encoder is loaded with `transformers` (optional extra `rerank`) as a sequence
classifier with one logit; a sigmoid gives the score, as in the official code (sentence-transformers'
CrossEncoder with a Sigmoid activation). Inputs are cut at the tokenizer's own maximum, as there: the
official code sets no `max_length` (a fixed limit is a named setting). One model instance is shared by all
concurrently running samples: `scores` (one query at a time, under a lock) is the serialised path;
`score_pairs` scores the pairs of many samples at once, which `corpus.rerank_stage` feeds from one batching
queue (`corpus.rerank_batch`).

`stub-overlap` is for testing only: the character-overlap score the conformance fixtures were recorded with
(official_requests/README), so a run can be compared with the official scripts without model weights.
"""

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from koblex_tasks.corpus.models import LazyModel, LoadedModel, install_hint, load_transformers
from koblex_tasks.hub import hub_unavailable
from koblex_tasks.install import pip_extra

PAPER_RERANKER = "dragonkue/bge-reranker-v2-m3-ko"
STUB_OVERLAP = "stub-overlap"
TEST_RERANKERS = (STUB_OVERLAP,)  # need no weights: never checked for an installed extra
DTYPES = ("float32", "bfloat16")
DEFAULT_DTYPE = "float32"  # the official code's (sentence-transformers' CrossEncoder default)
_UNBOUNDED = 2**31 - 1  # a tokenizer without a maximum (transformers' 1e30 sentinel): no cut, as officially
INSTALL_HINT = install_hint("the cross-encoder reranker", "rerank", "reranker=none")
RERANKER_OFF = "-T reranker=none"
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")


class Reranker(Protocol):
    name: str

    def config(self) -> dict[str, object]: ...

    def scores(self, query: str, passages: Sequence[str]) -> list[float]: ...


class NoReranker:
    """Keeps the first-stage order: scores decrease with rank."""

    name = "none"

    def config(self) -> dict[str, object]:
        return {"name": self.name}

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        return [float(-rank) for rank in range(len(passages))]


class StubOverlapReranker:
    """For tests only: `len(set(q) & set(p)) / (1 + len(p))` over characters (float64), the fixtures' stub."""

    name = STUB_OVERLAP

    def config(self) -> dict[str, object]:
        return {"name": self.name, "testing_only": True}

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        chars = set(query)
        return [len(chars & set(p)) / (1 + len(p)) for p in passages]


class CrossEncoderReranker:
    """A Hugging Face cross-encoder scoring (query, passage) pairs; loads lazily on first use."""

    name = "cross-encoder"

    def __init__(
        self,
        model: str = PAPER_RERANKER,
        device: str | None = None,
        batch_size: int = 50,
        max_length: int | None = None,
        dtype: str = DEFAULT_DTYPE,
    ) -> None:
        """`max_length` None: the tokenizer's own maximum (the official code's); an int cuts there. `dtype`:
        float32 (the official code's) or bfloat16 (a named speed setting)."""
        if dtype not in DTYPES:
            raise ValueError(f"reranker_dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        self.model_name = model
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length
        self.dtype = dtype
        self._model = LazyModel(self._load)

    def config(self) -> dict[str, object]:
        return {
            "name": self.name,
            "model": self.model_name,
            "max_length": self.max_length,
            "dtype": self.dtype,
            "device": self.device,
        }

    def _load(self) -> LoadedModel:
        return load_transformers(
            self.model_name, "AutoModelForSequenceClassification", self.device, INSTALL_HINT, self.dtype
        )

    def _limit(self, loaded: LoadedModel) -> int:
        if self.max_length is not None:
            return self.max_length
        own = getattr(loaded.tokenizer, "model_max_length", None)
        return int(own) if isinstance(own, int | float) and own < _UNBOUNDED else _UNBOUNDED

    def score_pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        """Scores of many pairs (of any queries) in their order, run in batches of similar length: padding
        a batch to its longest pair is what a batch of mixed lengths wastes."""
        if not pairs:
            return []
        with self._model.use() as loaded:
            limit = self._limit(loaded)
            queries, passages = [q for q, _ in pairs], [p for _, p in pairs]
            lengths = loaded.tokenizer(queries, passages, truncation=True, max_length=limit)["input_ids"]
            order = sorted(range(len(pairs)), key=lambda i: len(lengths[i]))
            out = [0.0] * len(pairs)
            with loaded.torch.inference_mode():
                for start in range(0, len(order), self.batch_size):
                    chunk = order[start : start + self.batch_size]
                    enc = loaded.inputs(
                        [queries[i] for i in chunk], [passages[i] for i in chunk], max_length=limit
                    )
                    logits = loaded.model(**enc).logits.view(-1).float()
                    for i, score in zip(chunk, loaded.torch.sigmoid(logits).tolist(), strict=True):
                        out[i] = score
            return out

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        with self._model.use() as loaded:
            out: list[float] = []
            with loaded.torch.inference_mode():
                for start in range(0, len(passages), self.batch_size):
                    batch = list(passages[start : start + self.batch_size])
                    enc = loaded.inputs([query] * len(batch), batch, max_length=self._limit(loaded))
                    logits = loaded.model(**enc).logits.view(-1).float()
                    out.extend(loaded.torch.sigmoid(logits).tolist())
            return out


def get_reranker(name: str | None, device: str | None = None, dtype: str = DEFAULT_DTYPE) -> Reranker:
    """`none` / None: no reranking; `bge` or `paper`: the paper's model; `stub-overlap`: the test stub; else: a model id or local path."""
    if name in (None, "", "none"):
        return NoReranker()
    if name == STUB_OVERLAP:
        return StubOverlapReranker()
    return CrossEncoderReranker(reranker_model(name), device=device, dtype=dtype)


def reranker_model(name: str | None) -> str:
    """The model a reranker setting names: "none", a test stub, or a model id/path (aliases resolved)."""
    if name in (None, ""):
        return "none"
    return PAPER_RERANKER if name in ("bge", "paper") else name


def reranker_unavailable(name: str | None) -> str | None:
    """Why the reranker `name` cannot run on this machine, in one line, or None when it can (or none is used).

    Only what is installed and the local Hugging Face cache are looked at (plus a ~3 s reachability probe when
    the weights are not cached), so a missing model is reported in seconds, not after download retries.
    """
    model_id = reranker_model(name)
    if model_id == "none" or model_id in TEST_RERANKERS:  # nothing to load
        return None
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        return (
            f"the reranker {model_id} needs {' and '.join(missing)}: {pip_extra('rerank')}, "
            f"or run without reranking: {RERANKER_OFF}"
        )
    local = Path(model_id)
    if local.exists():
        if not (local / "config.json").is_file():
            return f"reranker directory {model_id} has no config.json; or use {RERANKER_OFF}"
        return None
    if weights_cached(model_id):
        return None
    reason = hub_unavailable()
    if reason:
        return (
            f"the reranker weights {model_id} are not in the local Hugging Face cache and {reason}: "
            f"download them once (hf download {model_id}) or run without reranking: {RERANKER_OFF}"
        )
    return None


def weights_cached(model_id: str) -> bool:
    """config.json and a weights file of `model_id` are in the local Hugging Face cache (no network)."""
    from huggingface_hub import try_to_load_from_cache

    def cached(filename: str) -> bool:
        return isinstance(try_to_load_from_cache(model_id, filename), str)

    return cached("config.json") and any(cached(f) for f in WEIGHT_FILES)
