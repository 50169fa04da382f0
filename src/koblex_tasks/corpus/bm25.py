"""BM25 over `hierarchy + content` with bm25s, cached on disk and verified on load.

Parameters default to the official ones (bm25s' Lucene variant, k1=1.5, b=0.75).
"""

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from koblex_tasks.corpus.cache import cache_key, cache_root, publish_entry, staging_dir, verify_entry
from koblex_tasks.corpus.statutes import StatuteCorpus
from koblex_tasks.corpus.tokenizers import Tokenizer

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BM25Params:
    k1: float = 1.5
    b: float = 0.75
    method: str = "lucene"


@dataclass(frozen=True)
class IndexHit:
    """A corpus position and its BM25 score."""

    index: int
    score: float


class BM25Index:
    """A bm25s index of one corpus with one tokenizer. Build with `BM25Index.open(...)`."""

    def __init__(self, retriever, tokenizer: Tokenizer, size: int, key: str, loaded_from_cache: bool) -> None:
        self._retriever = retriever
        self._vocab: dict[str, int] = retriever.vocab_dict
        self.tokenizer = tokenizer
        self.size = size
        self.key = key
        self.loaded_from_cache = loaded_from_cache

    @staticmethod
    def key_for(corpus: StatuteCorpus, tokenizer: Tokenizer, params: BM25Params) -> str:
        import bm25s

        return cache_key(
            {
                "corpus": corpus.fingerprint,
                "size": len(corpus),
                "tokenizer": tokenizer.config(),
                "params": params.__dict__,
                "bm25s": bm25s.__version__,
                "format": 1,
            }
        )

    @classmethod
    def open(
        cls,
        corpus: StatuteCorpus,
        tokenizer: Tokenizer,
        params: BM25Params = BM25Params(),
        cache_dir: Path | None = None,
        use_cache: bool = True,
    ) -> "BM25Index":
        """Load the index from the cache if a verified entry exists; otherwise build it (and cache it)."""
        import bm25s

        key = cls.key_for(corpus, tokenizer, params)
        entry = (cache_dir or cache_root()) / "bm25" / key
        if use_cache and entry.exists():
            if verify_entry(entry, key):
                try:
                    retriever = bm25s.BM25.load(str(entry), show_progress=False)
                    return cls(retriever, tokenizer, len(corpus), key, loaded_from_cache=True)
                except Exception as exc:  # a verified but unreadable entry: rebuild rather than fail
                    logger.warning("BM25 cache entry %s could not be loaded (%s); rebuilding", entry, exc)
            else:
                logger.warning("BM25 cache entry %s is stale or corrupted; rebuilding", entry)
        retriever = cls._build(corpus, tokenizer, params)
        if use_cache:
            build = staging_dir(entry)
            retriever.save(str(build), show_progress=False)
            publish_entry(build, entry, key, extra={"corpus_source": corpus.source, "size": len(corpus)})
        return cls(retriever, tokenizer, len(corpus), key, loaded_from_cache=False)

    @staticmethod
    def _build(corpus: StatuteCorpus, tokenizer: Tokenizer, params: BM25Params):
        import bm25s

        tokens = tokenizer.tokenize([p.key for p in corpus.provisions])
        retriever = bm25s.BM25(k1=params.k1, b=params.b, method=params.method)
        retriever.index(tokens, show_progress=False)
        return retriever

    def search_tokens(self, query_tokens: list[str], k: int) -> list[IndexHit]:
        """Top-k by BM25 score. Unknown terms are dropped; a query with no known term returns nothing."""
        known = [t for t in query_tokens if t in self._vocab]
        k = min(k, self.size)
        if not known or k <= 0:
            return []
        ids = np.array([[self._vocab[t] for t in known]])
        scores = self._retriever.get_scores(ids[0].tolist())
        top = _top_k(scores, k)
        return [IndexHit(index=int(i), score=float(scores[i])) for i in top if scores[i] > 0]

    def search(self, query: str, k: int) -> list[IndexHit]:
        return self.search_tokens(self.tokenizer.tokenize([query])[0], k)

    def search_many(self, queries: list[str], k: int) -> list[list[IndexHit]]:
        return [self.search_tokens(tokens, k) for tokens in self.tokenizer.tokenize(queries)]


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest scores, best first; ties broken by corpus position for determinism."""
    if k >= len(scores):
        candidates = np.arange(len(scores))
    else:
        candidates = np.argpartition(-scores, k - 1)[:k]
        threshold = scores[candidates].min()
        candidates = np.flatnonzero(scores >= threshold)
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order][:k]
