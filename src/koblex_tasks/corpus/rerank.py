"""Reranking stage: `none`, the paper's cross-encoder (`dragonkue/bge-reranker-v2-m3-ko`), or a test stub.

The cross-encoder is loaded with `transformers` (optional extra `koblex-tasks[rerank]`) as a sequence
classifier with one logit; a sigmoid gives the score, as in the official code (sentence-transformers'
CrossEncoder with a Sigmoid activation). Inputs are cut at the tokenizer's own maximum, as there: the
official code sets no `max_length` (a fixed limit is a named setting). One model instance is shared by all
concurrently running samples: `scores` (one query at a time, under a lock) is the serialised path;
`score_pairs` scores the pairs of many samples at once, which `corpus.rerank_stage` feeds from one batching
queue (`corpus.rerank_batch`).

`stub-overlap` is for testing only: the character-overlap score the conformance fixtures were recorded with
(official_requests/README), so a run can be compared with the official scripts without model weights.
"""

from collections.abc import Sequence
from typing import Protocol

from koblex_tasks.corpus.models import LazyModel, LoadedModel, install_hint, load_transformers

PAPER_RERANKER = "dragonkue/bge-reranker-v2-m3-ko"
STUB_OVERLAP = "stub-overlap"
TEST_RERANKERS = (STUB_OVERLAP,)  # need no weights: never checked for an installed extra
DTYPES = ("float32", "bfloat16")
DEFAULT_DTYPE = "float32"  # the official code's (sentence-transformers' CrossEncoder default)
_UNBOUNDED = 2**31 - 1  # a tokenizer without a maximum (transformers' 1e30 sentinel): no cut, as officially
INSTALL_HINT = install_hint("the cross-encoder reranker", "rerank", "reranker=none")


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
    if name in ("bge", "paper"):
        return CrossEncoderReranker(PAPER_RERANKER, device=device, dtype=dtype)
    return CrossEncoderReranker(name, device=device, dtype=dtype)
