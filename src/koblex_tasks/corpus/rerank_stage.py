"""The rerank stage a retriever uses: which scorer (in process, batched; or a rerank engine by URL), the score
cache in front of it, and its cost in sight.

Every reranker but `none` is wrapped in one `RerankStage` per process and reranker setting (so concurrent
samples and the retrievers of several tokenizers share one model and one batching queue). The stage looks the
pairs up in the score cache (`corpus.rerank_cache`), scores only the misses, and counts pairs, cache hits and
the seconds spent scoring: each sample's counts go to its metadata (`rerank`: what the log records), the
run's to Inspect's display (`rerank`: pairs, cached share, pairs/s). Scores in, same order out: the stage
never reorders anything; the caller's sort does.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import anyio.from_thread

from koblex_tasks.corpus.cache import file_sha256
from koblex_tasks.corpus.rerank import (
    DEFAULT_DTYPE,
    PAPER_RERANKER,
    STUB_OVERLAP,
    CrossEncoderReranker,
    NoReranker,
    Reranker,
    StubOverlapReranker,
)
from koblex_tasks.corpus.rerank_batch import BatchQueue
from koblex_tasks.corpus.rerank_cache import ScoreCache, pair_key, scorer_identity
from koblex_tasks.corpus.rerank_server import ServerReranker, probe_server

SAMPLE_KEY = "rerank"  # the sample-metadata key of a sample's rerank counts
STUB_REVISION = "stub-overlap-v1"  # the stub's formula; change it with the formula
DISPLAY_EVERY_S = 1.0


@dataclass(frozen=True)
class RerankSetup:
    """The reranker settings of a run: which scorer, where, in which precision, with or without the cache."""

    name: str = "none"
    url: str | None = None
    dtype: str = DEFAULT_DTYPE
    device: str | None = None
    cache: bool = True
    cache_dir: Path | None = None

    @property
    def model(self) -> str:
        """The model the setting names, with the paper's aliases resolved."""
        return PAPER_RERANKER if self.name in ("bge", "paper") else self.name


class Tally:
    """Counts of one scope (a sample, or the process): pairs asked, cache hits, pairs scored, seconds."""

    def __init__(self) -> None:
        self.pairs = 0
        self.cache_hits = 0
        self.scored = 0
        self.seconds = 0.0

    def add(self, pairs: int, hits: int, scored: int, seconds: float) -> None:
        self.pairs += pairs
        self.cache_hits += hits
        self.scored += scored
        self.seconds += seconds

    def as_dict(self) -> dict[str, object]:
        return {
            "pairs": self.pairs,
            "cache_hits": self.cache_hits,
            "scored": self.scored,
            "seconds": round(self.seconds, 3),
            "pairs_per_s": round(self.scored / self.seconds, 2) if self.seconds > 0 else None,
        }


def _inside_inspect() -> ModuleType | None:
    """Inspect's helpers, only when a run has loaded Inspect: the retrieval path alone never imports it."""
    if "inspect_ai" not in sys.modules:
        return None
    from koblex_tasks import _inspect_compat

    return _inspect_compat


def _record_in_sample(stage: dict[str, object], pairs: int, hits: int, scored: int, seconds: float) -> None:
    """Add one call's counts to the running sample's metadata (nothing outside a sample)."""
    compat = _inside_inspect()
    metadata = compat.current_sample_metadata() if compat is not None else None
    if metadata is None:
        return
    record = metadata.get(SAMPLE_KEY)
    if not isinstance(record, dict):
        record = {**stage, "pairs": 0, "cache_hits": 0, "scored": 0, "seconds": 0.0}
    record["pairs"] += pairs
    record["cache_hits"] += hits
    record["scored"] += scored
    record["seconds"] = round(record["seconds"] + seconds, 3)
    metadata[SAMPLE_KEY] = record


class RerankStage:
    """A scorer behind the score cache, counted; `name` and `config()` are the scorer's (and the cache's)."""

    def __init__(self, scorer: Reranker, identity: dict[str, object], cache: ScoreCache | None) -> None:
        self.scorer = scorer
        self.name = scorer.name
        self.identity = identity
        self._key = scorer_identity(identity)
        self.cache = cache
        self.total = Tally()
        self._lock = threading.Lock()
        self._shown = 0.0

    def config(self) -> dict[str, object]:
        return {**self.scorer.config(), "cache": str(self.cache.path) if self.cache else None}

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        keys = [pair_key(self._key, query, p) for p in passages]
        known = self.cache.get_many(keys) if self.cache is not None else {}
        missing = list(dict.fromkeys(p for p, k in zip(passages, keys, strict=True) if k not in known))
        started = time.monotonic()
        fresh = dict(zip(missing, self.scorer.scores(query, missing), strict=True)) if missing else {}
        seconds = time.monotonic() - started if missing else 0.0
        if self.cache is not None and fresh:
            self.cache.put_many({pair_key(self._key, query, p): s for p, s in fresh.items()})
        out = [known[k] if k in known else fresh[p] for p, k in zip(passages, keys, strict=True)]
        hits = len(passages) - sum(1 for k in keys if k not in known)
        with self._lock:
            self.total.add(len(passages), hits, len(fresh), seconds)
            _record_in_sample({"scorer": self.identity}, len(passages), hits, len(fresh), seconds)
            self._show()
        return out

    def _show(self) -> None:
        """The run's counts in Inspect's display, at most once a second (from a worker thread of the run)."""
        now = time.monotonic()
        if now - self._shown < DISPLAY_EVERY_S:
            return
        self._shown = now
        done = self.total.as_dict()
        rate = f", {done['pairs_per_s']} pairs/s" if done["pairs_per_s"] else ""
        line = f"{done['pairs']} pairs, {done['cache_hits']} cached{rate}"
        # outside a worker thread of the run's event loop there is no display to show it on
        compat = _inside_inspect()
        if compat is None:
            return
        with contextlib.suppress(RuntimeError):
            anyio.from_thread.run_sync(compat.show_counter, "rerank", line)


def _model_revision(model: str) -> str | None:
    """The weights' revision: a local directory's config hash, or the snapshot the hub cache holds."""
    local = Path(model)
    if local.is_dir():
        config = local / "config.json"
        return file_sha256(config) if config.is_file() else None
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache(model, "config.json")
    return Path(found).parent.name if isinstance(found, str) else None


def build_stage(setup: RerankSetup) -> Reranker:
    """The scorer a setup names, behind the cache; `none` is no stage at all."""
    if setup.name in ("", "none"):
        return NoReranker()
    scorer: Reranker
    if setup.url:
        info = probe_server(setup.url, setup.model)
        scorer = ServerReranker(info)
        identity: dict[str, object] = {
            "model": info.model,
            "revision": info.revision,
            "engine": info.engine,  # the engine's dtype and limit are its own: one key per engine and model
        }
    elif setup.name == STUB_OVERLAP:
        scorer = StubOverlapReranker()
        identity = {"model": STUB_OVERLAP, "revision": STUB_REVISION}
    else:
        encoder = CrossEncoderReranker(setup.model, device=setup.device, dtype=setup.dtype)
        scorer = BatchedCrossEncoder(encoder)
        identity = {
            "model": setup.model,
            "revision": _model_revision(setup.model),
            "dtype": setup.dtype,
            "max_length": encoder.max_length,
        }
    return RerankStage(scorer, identity, ScoreCache(setup.cache_dir) if setup.cache else None)


class BatchedCrossEncoder:
    """The in-process cross-encoder behind one batching queue shared by every sample."""

    def __init__(self, encoder: CrossEncoderReranker) -> None:
        self.encoder = encoder
        self.name = encoder.name
        self.queue = BatchQueue(encoder.score_pairs)

    def config(self) -> dict[str, object]:
        return {**self.encoder.config(), "batching": "one queue across samples"}

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        return self.queue.scores(query, passages)


_stages: dict[RerankSetup, Reranker] = {}
_stages_lock = threading.Lock()


def get_stage(setup: RerankSetup) -> Reranker:
    """The process-wide stage of a setup (one model, one queue, one cache connection), built on first use."""
    with _stages_lock:
        stage = _stages.get(setup)
        if stage is None:
            stage = _stages[setup] = build_stage(setup)
        return stage


def clear_stages() -> None:
    with _stages_lock:
        _stages.clear()
