"""Reranking stage: `none`, the paper's cross-encoder (`dragonkue/bge-reranker-v2-m3-ko`), or a test stub.

The cross-encoder is loaded with `transformers` (optional extra `koblex-tasks[rerank]`) as a sequence
classifier with one logit; a sigmoid gives the score, as in the official code (sentence-transformers'
CrossEncoder with a Sigmoid activation). Inputs are cut at the tokenizer's own maximum, as there: the
official code sets no `max_length` (a fixed limit is a named setting). Model inference is serialised per
process with a lock, since one model instance is shared by all concurrently running samples.

`stub-overlap` is for testing only: the character-overlap score the conformance fixtures were recorded with
(official_requests/README), so a run can be compared with the official scripts without model weights.
"""

from collections.abc import Sequence
from typing import Protocol

from koblex_tasks.corpus.models import LazyModel, LoadedModel, install_hint, load_transformers

PAPER_RERANKER = "dragonkue/bge-reranker-v2-m3-ko"
STUB_OVERLAP = "stub-overlap"
TEST_RERANKERS = (STUB_OVERLAP,)  # need no weights: never checked for an installed extra
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
    ) -> None:
        """`max_length` None: the tokenizer's own maximum (the official code's); an int cuts there."""
        self.model_name = model
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length
        self._model = LazyModel(self._load)

    def config(self) -> dict[str, object]:
        return {"name": self.name, "model": self.model_name, "max_length": self.max_length}

    def _load(self) -> LoadedModel:
        return load_transformers(
            self.model_name, "AutoModelForSequenceClassification", self.device, INSTALL_HINT
        )

    def _limit(self, loaded: LoadedModel) -> int:
        if self.max_length is not None:
            return self.max_length
        own = getattr(loaded.tokenizer, "model_max_length", None)
        return int(own) if isinstance(own, int | float) and own < _UNBOUNDED else _UNBOUNDED

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


def get_reranker(name: str | None, device: str | None = None) -> Reranker:
    """`none` / None: no reranking; `bge` or `paper`: the paper's model; `stub-overlap`: the test stub; else: a model id or local path."""
    if name in (None, "", "none"):
        return NoReranker()
    if name == STUB_OVERLAP:
        return StubOverlapReranker()
    if name in ("bge", "paper"):
        return CrossEncoderReranker(PAPER_RERANKER, device=device)
    return CrossEncoderReranker(name, device=device)
