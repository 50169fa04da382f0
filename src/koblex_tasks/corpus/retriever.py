"""The one retriever every solver uses: a first stage (BM25, dense or hybrid), optional reranking, provisions.

First stages (`RetrieverSettings.retrieval`):
- `bm25` (default): BM25 over `hierarchy + content` with the chosen tokenizer, as in the paper; `bm25_order`
  picks bm25s' own candidate lists (`bm25s`, the paper's: float32 scores, its tie order, zero-score rows padding
  a short list) or exact float64 scores with ties by corpus position (`float64`).
- `dense`: BGE-M3 dense vectors (`corpus/dense.py`), inner-product top-k.
- `hybrid`: reciprocal rank fusion (`corpus/hybrid.py`) of the BM25 and dense top-`fusion_depth` lists.
The reranker, if any, reorders whichever first stage ran.

Retrievers are built once per process per settings (a lazy, thread-safe registry) because building an index
over 233K paragraphs takes a while and samples run concurrently. `asearch` runs the CPU-bound work in a
worker thread so the event loop keeps serving model calls.

`aretrieve` / `aretrieve_many` are what solvers call: first stage, optional rerank, and one record per call in
the running sample's events (`corpus/events.py`: query, first-stage keys, whether reranked, keys returned).
The leaderboard accepts a predicted provision only when such a record returned it; `search` and `rerank`
alone record nothing.
"""

import threading
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal

import anyio

from koblex_tasks.corpus import scoring
from koblex_tasks.corpus.bm25 import ORDERS, BM25Index, BM25Order, BM25Params, IndexHit
from koblex_tasks.corpus.dense import DEFAULT_DENSE_MODEL, DenseHit, DenseIndex, get_encoder
from koblex_tasks.corpus.events import record_retrieval
from koblex_tasks.corpus.hybrid import DEFAULT_RRF_K, reciprocal_rank_fusion
from koblex_tasks.corpus.provision import Provision
from koblex_tasks.corpus.rerank import DEFAULT_DTYPE, DTYPES, Reranker
from koblex_tasks.corpus.rerank_stage import RerankSetup, clear_stages, get_stage
from koblex_tasks.corpus.statutes import STATUTE_HF_REVISION, StatuteCorpus, load_statutes
from koblex_tasks.corpus.tokenizers import get_tokenizer

RETRIEVAL_MODES = ("bm25", "dense", "hybrid")
# How equal rerank scores are ordered: by first-stage rank (a stable sort; ParSeR's original scripts) or by
# passage text, descending (the refactored scripts' `sorted(zip(scores, texts), reverse=True)`).
TieOrder = Literal["first_stage", "text"]


@dataclass(frozen=True)
class RetrieverSettings:
    """Everything that determines retrieval results; stored in each sample's metadata and in the log.

    Settings written by older versions (no `retrieval`, `dense_model`, ... keys) load as BM25 retrieval;
    without `bm25_order`, as today's default (`bm25s`), although they ran `float64`.
    """

    corpus: str | None = None  # local JSONL path; None = Hugging Face dataset for `lang`
    lang: str = "ko"
    corpus_revision: str | None = STATUTE_HF_REVISION
    tokenizer: str = "kiwi"
    reranker: str = "none"
    k1: float = 1.5
    b: float = 0.75
    retrieval: str = "bm25"  # "bm25" | "dense" | "hybrid"
    dense_model: str = DEFAULT_DENSE_MODEL  # hub id or local path of a BGE-M3-style encoder
    hybrid_weights: tuple[float, float] = (1.0, 1.0)  # RRF weights of (BM25, dense)
    rrf_k: float = DEFAULT_RRF_K
    fusion_depth: int = 100  # hybrid: candidates taken from each ranking before fusion (at least k)
    bm25_order: BM25Order = "bm25s"  # see bm25.py; one index serves both
    # Where and how the reranker scores (corpus/rerank_stage.py): a rerank engine's base URL (None: in
    # process), the in-process weights' dtype and device, and the on-disk score cache.
    reranker_url: str | None = None
    reranker_dtype: str = DEFAULT_DTYPE
    reranker_device: str | None = None
    reranker_cache: bool = True

    def __post_init__(self) -> None:
        # Values arrive from -T (YAML + comma parsing), JSON logs (lists, nulls) or Python: normalise them so
        # the settings stay hashable and equal settings compare equal.
        defaults = {name: f.default for name, f in self.__dataclass_fields__.items()}
        for name in (
            "retrieval",
            "dense_model",
            "hybrid_weights",
            "rrf_k",
            "fusion_depth",
            "bm25_order",
            "reranker_dtype",
            "reranker_cache",
        ):
            if getattr(self, name) is None:
                object.__setattr__(self, name, defaults[name])
        retrieval = str(self.retrieval).lower()
        if retrieval not in RETRIEVAL_MODES:
            raise ValueError(f"retrieval must be one of {RETRIEVAL_MODES}, got {self.retrieval!r}")
        object.__setattr__(self, "retrieval", retrieval)
        order = str(self.bm25_order).lower()
        if order not in ORDERS:
            raise ValueError(f"bm25_order must be one of {ORDERS}, got {self.bm25_order!r}")
        object.__setattr__(self, "bm25_order", order)
        if self.reranker_dtype not in DTYPES:
            raise ValueError(f"reranker_dtype must be one of {DTYPES}, got {self.reranker_dtype!r}")
        object.__setattr__(self, "reranker_cache", bool(self.reranker_cache))
        object.__setattr__(self, "dense_model", str(self.dense_model))
        raw: object = self.hybrid_weights
        if isinstance(raw, str):
            raw = raw.replace(",", " ").split()
        elif isinstance(raw, int | float):
            raw = [raw]
        weights = tuple(float(w) for w in raw)  # type: ignore[attr-defined]
        if len(weights) != 2 or any(w < 0 for w in weights):
            raise ValueError(f"hybrid_weights must be two non-negative numbers (BM25, dense), got {weights}")
        object.__setattr__(self, "hybrid_weights", weights)
        object.__setattr__(self, "rrf_k", float(self.rrf_k))
        object.__setattr__(self, "fusion_depth", int(self.fusion_depth))
        if self.rrf_k < 0 or self.fusion_depth < 1:
            raise ValueError(
                f"rrf_k must be >= 0 and fusion_depth >= 1, got {self.rrf_k}, {self.fusion_depth}"
            )

    @property
    def rerank_setup(self) -> RerankSetup:
        return RerankSetup(
            self.reranker, self.reranker_url, self.reranker_dtype, self.reranker_device, self.reranker_cache
        )

    @property
    def uses_bm25(self) -> bool:
        return self.retrieval in ("bm25", "hybrid")

    @property
    def uses_dense(self) -> bool:
        return self.retrieval in ("dense", "hybrid")

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["hybrid_weights"] = list(self.hybrid_weights)  # JSON-shaped, as it comes back from a log
        return data

    @classmethod
    def from_dict(cls, data: dict[str, object] | None) -> "RetrieverSettings":
        if not data:
            return cls()
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Hit:
    """One retrieved provision: its rank (0 = best) and the scores of the stages that produced it.

    `bm25_score` is None when BM25 did not rank the provision (dense retrieval, or a hybrid hit found only
    by the dense ranking); `dense_score` likewise; `fused_score` is the RRF score of hybrid hits.
    """

    rank: int
    provision: Provision
    bm25_score: float | None
    rerank_score: float | None = None
    dense_score: float | None = None
    fused_score: float | None = None
    source: str = "bm25"  # the first stage: "bm25", "dense" or "hybrid"

    @property
    def first_stage_score(self) -> float | None:
        return {"bm25": self.bm25_score, "dense": self.dense_score, "hybrid": self.fused_score}.get(
            self.source
        )


@dataclass(frozen=True)
class Retrieval:
    """One recorded retrieval: the first stage's hits and the hits returned (reranked, when asked)."""

    query: str
    first_stage: list[Hit]
    returned: list[Hit]


class Retriever:
    """A first stage (BM25, dense or hybrid) over a statute corpus, then an optional reranker."""

    def __init__(
        self,
        corpus: StatuteCorpus,
        index: BM25Index | None,
        reranker: Reranker,
        settings: RetrieverSettings,
        dense: DenseIndex | None = None,
    ):
        if settings.uses_bm25 and index is None:
            raise ValueError(f"retrieval={settings.retrieval!r} needs a BM25 index")
        if settings.uses_dense and dense is None:
            raise ValueError(f"retrieval={settings.retrieval!r} needs a dense index")
        self.corpus = corpus
        self.index = index
        self.dense = dense
        self.reranker = reranker
        self.settings = settings

    def describe(self) -> dict[str, object]:
        described: dict[str, object] = {
            "settings": self.settings.as_dict(),
            "corpus": self.corpus.describe(),
            "retrieval": self.settings.retrieval,
            "index_key": self.index.key if self.index is not None else None,
            "tokenizer": self.index.tokenizer.config() if self.index is not None else None,
            "reranker": self.reranker.config(),
        }
        if self.dense is not None:
            described["dense_index_key"] = self.dense.key
            described["dense_encoder"] = self.dense.encoder.config()
        return described

    def _lexical(self) -> BM25Index:
        if self.index is None:  # excluded by __init__ for the modes that use it
            raise RuntimeError(f"retrieval={self.settings.retrieval!r} has no BM25 index")
        return self.index

    def _semantic(self) -> DenseIndex:
        if self.dense is None:
            raise RuntimeError(f"retrieval={self.settings.retrieval!r} has no dense index")
        return self.dense

    def search(self, query: str, k: int) -> list[Hit]:
        """First-stage top-k for `query`, best first."""
        if self.settings.retrieval == "bm25":
            return self._bm25_hits(self._lexical().search(query, k, self.settings.bm25_order))
        return self.search_many([query], k)[0]

    def search_many(self, queries: list[str], k: int) -> list[list[Hit]]:
        mode = self.settings.retrieval
        if mode == "bm25":
            lists = self._lexical().search_many(queries, k, self.settings.bm25_order)
            return [self._bm25_hits(hits) for hits in lists]
        if mode == "dense":
            return [self._dense_hits(hits) for hits in self._semantic().search_many(queries, k)]
        depth = max(k, self.settings.fusion_depth)
        lexical = self._lexical().search_many(queries, depth, self.settings.bm25_order)
        semantic = self._semantic().search_many(queries, depth)
        return [self._fuse(b, d, k) for b, d in zip(lexical, semantic, strict=True)]

    def rerank(self, query: str, hits: list[Hit], top: int, ties: TieOrder = "first_stage") -> list[Hit]:
        """Reorder `hits` by the reranker's score for `query` and keep `top` (equal scores: `ties`)."""
        texts = [h.provision.text for h in hits]  # what the model sees
        scores = self.reranker.scores(query, texts)
        if ties == "text":
            order = sorted(range(len(hits)), key=lambda i: (scores[i], texts[i]), reverse=True)[:top]
        else:
            order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))[:top]
        return [replace(hits[i], rank=new_rank, rerank_score=scores[i]) for new_rank, i in enumerate(order)]

    async def asearch(self, query: str, k: int) -> list[Hit]:
        return await anyio.to_thread.run_sync(self.search, query, k)

    async def asearch_many(self, queries: list[str], k: int) -> list[list[Hit]]:
        return await anyio.to_thread.run_sync(self.search_many, queries, k)

    async def arerank(
        self, query: str, hits: list[Hit], top: int, ties: TieOrder = "first_stage"
    ) -> list[Hit]:
        if self.reranker.name == "none":
            return hits[:top]
        return await anyio.to_thread.run_sync(self.rerank, query, hits, top, ties)

    async def aretrieve(
        self,
        query: str,
        k: int,
        top: int | None = None,
        rerank_query: str | None = None,
        ties: TieOrder = "first_stage",
    ) -> Retrieval:
        """First-stage top `k` for `query`; with `top`, the reranker's top `top` of them against
        `rerank_query` (default `query`; no reranker: the first `top`). Recorded in the sample's events."""
        first = await self.asearch(query, k)
        return await self._finish(query, k, first, top, rerank_query, ties)

    async def aretrieve_many(
        self,
        queries: list[str],
        k: int,
        top: int | None = None,
        rerank_query: str | None = None,
        ties: TieOrder = "first_stage",
    ) -> list[Retrieval]:
        """`aretrieve` for several queries, the first stage batched; one record per query."""
        firsts = await self.asearch_many(queries, k) if queries else []
        return [
            await self._finish(q, k, first, top, rerank_query, ties)
            for q, first in zip(queries, firsts, strict=True)
        ]

    async def _finish(
        self, query: str, k: int, first: list[Hit], top: int | None, rerank_query: str | None, ties: TieOrder
    ) -> Retrieval:
        """Rerank (if asked) and record the call."""
        against = query if rerank_query is None else rerank_query
        returned = first if top is None else await self.arerank(against, first, top, ties)
        reranked = top is not None and self.reranker.name != "none"
        record_retrieval(
            {
                "query": query,
                "k": k,
                "first_stage": [h.provision.key for h in first],
                "rerank_query": against if reranked else None,
                "reranker": self.reranker.name if reranked else None,
                "top": top,
                "returned": [h.provision.key for h in returned],
            }
        )
        return Retrieval(query, first, returned)

    def _bm25_hits(self, hits: list[IndexHit]) -> list[Hit]:
        provision = self.corpus.provision
        return [Hit(rank=r, provision=provision(h.index), bm25_score=h.score) for r, h in enumerate(hits)]

    def _dense_hits(self, hits: list[DenseHit]) -> list[Hit]:
        provision = self.corpus.provision
        return [
            Hit(rank=r, provision=provision(h.index), bm25_score=None, dense_score=h.score, source="dense")
            for r, h in enumerate(hits)
        ]

    def _fuse(self, lexical: list[IndexHit], semantic: list[DenseHit], k: int) -> list[Hit]:
        bm25_scores = {h.index: h.score for h in lexical}
        dense_scores = {h.index: h.score for h in semantic}
        fused = reciprocal_rank_fusion(
            [[h.index for h in lexical], [h.index for h in semantic]],
            weights=self.settings.hybrid_weights,
            rrf_k=self.settings.rrf_k,
            k=k,
        )
        provision = self.corpus.provision
        return [
            Hit(
                rank=r,
                provision=provision(f.doc),
                bm25_score=bm25_scores.get(f.doc),
                dense_score=dense_scores.get(f.doc),
                fused_score=f.score,
                source="hybrid",
            )
            for r, f in enumerate(fused)
        ]


def _same_indexes(a: RetrieverSettings, b: RetrieverSettings) -> bool:
    """True if the two settings need the same corpus and indexes (they differ at most in what reads them)."""
    return replace(a, **{name: getattr(b, name) for name in _READER_SETTINGS}) == b


# Settings of what reads the indexes (the reranker, the BM25 order), not of the indexes themselves.
_READER_SETTINGS = (
    "reranker",
    "bm25_order",
    "reranker_url",
    "reranker_dtype",
    "reranker_device",
    "reranker_cache",
)


_registry: dict[RetrieverSettings, Retriever] = {}
_registry_lock = threading.Lock()


def build_retriever(
    settings: RetrieverSettings, cache_dir: Path | None = None, like: Retriever | None = None
) -> Retriever:
    """A retriever for `settings`; given `like`, one that differs only in its reranker or BM25 order, its
    corpus and indexes are shared instead of loaded and opened again."""
    if like is not None and _same_indexes(like.settings, settings):
        return Retriever(
            like.corpus, like.index, get_stage(settings.rerank_setup), settings, dense=like.dense
        )
    if settings.uses_bm25:
        scoring.load_fast_kernel()  # in the background, while the corpus loads
    corpus = load_statutes(settings.corpus, settings.lang, settings.corpus_revision, cache_dir=cache_dir)
    index = None
    if settings.uses_bm25:
        index = BM25Index.open(
            corpus, get_tokenizer(settings.tokenizer), BM25Params(k1=settings.k1, b=settings.b), cache_dir
        )
    dense = None
    if settings.uses_dense:
        dense = DenseIndex.open(corpus, get_encoder(settings.dense_model), cache_dir)
    return Retriever(corpus, index, get_stage(settings.rerank_setup), settings, dense=dense)


def get_retriever(settings: RetrieverSettings) -> Retriever:
    """The process-wide retriever for these settings, built on first use.

    Settings that differ only in the reranker (or the BM25 order) share one corpus and index: a task builds
    its retriever with the paper's reranker, while most baselines search the same pool with none.
    """
    with _registry_lock:
        retriever = _registry.get(settings)
        if retriever is None:
            like = next((r for s, r in _registry.items() if _same_indexes(s, settings)), None)
            retriever = build_retriever(settings, like=like)
            _registry[settings] = retriever
        return retriever


async def aget_retriever(settings: RetrieverSettings) -> Retriever:
    """Like get_retriever, but a first-time build runs in a worker thread."""
    if settings in _registry:
        return _registry[settings]
    return await anyio.to_thread.run_sync(get_retriever, settings)


def install_retriever(settings: RetrieverSettings, retriever: Retriever) -> None:
    """Serve `retriever` for these settings from now on (a stand-in: the trace replay's scripted one)."""
    with _registry_lock:
        _registry[settings] = retriever


def clear_retrievers() -> None:
    """Forget every retriever and rerank stage (the next use builds them anew, as a new process would)."""
    with _registry_lock:
        _registry.clear()
    clear_stages()
