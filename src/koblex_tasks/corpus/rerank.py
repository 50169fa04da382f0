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
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from koblex_tasks.corpus.models import LazyModel, LoadedModel, install_hint, load_transformers
from koblex_tasks.corpus.rerank_batch import length_batches
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
MAX_BATCH_TOKENS = 8192  # padded tokens per micro-batch of the length-sorted path (bounds its activations)


@dataclass(frozen=True)
class Encoded:
    """One pair's model inputs as the tokenizer gives them (name -> token ids), unpadded and hashable, so
    that a pair tokenised once can be pooled, deduplicated and sorted by length."""

    features: tuple[tuple[str, tuple[int, ...]], ...]

    @property
    def length(self) -> int:
        return len(self.features[0][1])

    def as_dict(self) -> dict[str, list[int]]:
        return {name: list(ids) for name, ids in self.features}


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
        max_batch_tokens: int = MAX_BATCH_TOKENS,
    ) -> None:
        """`max_length` None: the tokenizer's own maximum (the official code's); an int cuts there. `dtype`:
        float32 (the official code's) or bfloat16 (a named speed setting)."""
        if dtype not in DTYPES:
            raise ValueError(f"reranker_dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        self.model_name = model
        self.device = device
        self.batch_size = batch_size  # pairs per batch of the serialised path
        self.max_batch_tokens = max_batch_tokens
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

    def encode(self, pairs: Sequence[tuple[str, str]]) -> list[Encoded]:
        """Each pair's model inputs (token ids and the like), cut at the limit, unpadded."""
        if not pairs:
            return []
        with self._model.use() as loaded:  # a fast tokenizer is not safe to share between threads
            features = loaded.tokenizer(
                [q for q, _ in pairs], [p for _, p in pairs], truncation=True, max_length=self._limit(loaded)
            )
            return [
                Encoded(tuple((name, tuple(ids[i])) for name, ids in features.items()))
                for i in range(len(pairs))
            ]

    def forward(self, encoded: Sequence[Encoded], batches: list[list[int]]) -> list[float]:
        """The scores of `encoded` in their order, the model run once per batch of indices (each batch padded
        to its longest pair, as the tokenizer pads)."""
        out = [0.0] * len(encoded)
        with self._model.use() as loaded, loaded.torch.inference_mode():
            for batch in batches:
                enc = loaded.tokenizer.pad(
                    [encoded[i].as_dict() for i in batch], padding=True, return_tensors="pt"
                ).to(loaded.device)
                logits = loaded.model(**enc).logits.view(-1).float()
                for i, score in zip(batch, loaded.torch.sigmoid(logits).tolist(), strict=True):
                    out[i] = score
        return out

    def forward_in_order(self, encoded: Sequence[Encoded]) -> list[float]:
        """The serialised path's batching: consecutive runs of `batch_size` pairs, in the order given."""
        n, size = len(encoded), self.batch_size
        return self.forward(
            encoded, [list(range(start, min(start + size, n))) for start in range(0, n, size)]
        )

    def forward_by_length(self, encoded: Sequence[Encoded]) -> list[float]:
        """The pairs sorted by length and cut into micro-batches of at most `max_batch_tokens` padded tokens
        (`length_batches`): a batch of mixed lengths pays for padding every pair to its longest."""
        return self.forward(encoded, length_batches([e.length for e in encoded], self.max_batch_tokens))

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Scores of many pairs (of any queries) in their order, run in micro-batches of similar length."""
        return self.forward_by_length(self.encode(pairs))

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        """One query's scores, its pairs run in the order given (the serialised path)."""
        return self.forward_in_order(self.encode([(query, p) for p in passages]))


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
