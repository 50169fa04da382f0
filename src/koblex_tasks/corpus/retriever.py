"""The one retriever every solver uses: BM25 first stage, optional reranking, results as provisions.

Retrievers are built once per process per settings (a lazy, thread-safe registry) because building an index
over 233K paragraphs takes a while and samples run concurrently. `asearch` runs the CPU-bound work in a
worker thread so the event loop keeps serving model calls.
"""

import threading
from dataclasses import asdict, dataclass
from pathlib import Path

import anyio

from koblex_tasks.corpus.bm25 import BM25Index, BM25Params
from koblex_tasks.corpus.provision import Provision
from koblex_tasks.corpus.rerank import Reranker, get_reranker
from koblex_tasks.corpus.statutes import STATUTE_HF_REVISION, StatuteCorpus, load_statutes
from koblex_tasks.corpus.tokenizers import get_tokenizer


@dataclass(frozen=True)
class RetrieverSettings:
    """Everything that determines retrieval results; stored in each sample's metadata and in the log."""

    corpus: str | None = None  # local JSONL path; None = Hugging Face dataset for `lang`
    lang: str = "ko"
    corpus_revision: str | None = STATUTE_HF_REVISION
    tokenizer: str = "kiwi"
    reranker: str = "none"
    k1: float = 1.5
    b: float = 0.75

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object] | None) -> "RetrieverSettings":
        if not data:
            return cls()
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Hit:
    """One retrieved provision: its rank (0 = best), first-stage and (if any) rerank score."""

    rank: int
    provision: Provision
    bm25_score: float
    rerank_score: float | None = None


class Retriever:
    """BM25 over a statute corpus, then an optional reranker."""

    def __init__(
        self, corpus: StatuteCorpus, index: BM25Index, reranker: Reranker, settings: RetrieverSettings
    ):
        self.corpus = corpus
        self.index = index
        self.reranker = reranker
        self.settings = settings

    def describe(self) -> dict[str, object]:
        return {
            "settings": self.settings.as_dict(),
            "corpus": self.corpus.describe(),
            "index_key": self.index.key,
            "tokenizer": self.index.tokenizer.config(),
            "reranker": self.reranker.config(),
        }

    def search(self, query: str, k: int) -> list[Hit]:
        """BM25 top-k for `query`, in score order."""
        return self._to_hits(self.index.search(query, k))

    def search_many(self, queries: list[str], k: int) -> list[list[Hit]]:
        return [self._to_hits(hits) for hits in self.index.search_many(queries, k)]

    def rerank(self, query: str, hits: list[Hit], top: int) -> list[Hit]:
        """Reorder `hits` by the reranker's score for `query` and keep `top` (stable for equal scores)."""
        scores = self.reranker.scores(query, [h.provision.key for h in hits])
        order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))[:top]
        return [
            Hit(
                rank=new_rank,
                provision=hits[i].provision,
                bm25_score=hits[i].bm25_score,
                rerank_score=scores[i],
            )
            for new_rank, i in enumerate(order)
        ]

    async def asearch(self, query: str, k: int) -> list[Hit]:
        return await anyio.to_thread.run_sync(self.search, query, k)

    async def asearch_many(self, queries: list[str], k: int) -> list[list[Hit]]:
        return await anyio.to_thread.run_sync(self.search_many, queries, k)

    async def arerank(self, query: str, hits: list[Hit], top: int) -> list[Hit]:
        if self.reranker.name == "none":
            return hits[:top]
        return await anyio.to_thread.run_sync(self.rerank, query, hits, top)

    def _to_hits(self, hits) -> list[Hit]:
        provisions = self.corpus.provisions
        return [Hit(rank=r, provision=provisions[h.index], bm25_score=h.score) for r, h in enumerate(hits)]


_registry: dict[RetrieverSettings, Retriever] = {}
_registry_lock = threading.Lock()


def build_retriever(settings: RetrieverSettings, cache_dir: Path | None = None) -> Retriever:
    corpus = load_statutes(settings.corpus, settings.lang, settings.corpus_revision)
    index = BM25Index.open(
        corpus, get_tokenizer(settings.tokenizer), BM25Params(k1=settings.k1, b=settings.b), cache_dir
    )
    return Retriever(corpus, index, get_reranker(settings.reranker), settings)


def get_retriever(settings: RetrieverSettings) -> Retriever:
    """The process-wide retriever for these settings, built on first use."""
    with _registry_lock:
        retriever = _registry.get(settings)
        if retriever is None:
            retriever = build_retriever(settings)
            _registry[settings] = retriever
        return retriever


async def aget_retriever(settings: RetrieverSettings) -> Retriever:
    """Like get_retriever, but a first-time build runs in a worker thread."""
    if settings in _registry:
        return _registry[settings]
    return await anyio.to_thread.run_sync(get_retriever, settings)


def clear_retrievers() -> None:
    with _registry_lock:
        _registry.clear()
