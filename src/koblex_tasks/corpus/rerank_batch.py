"""One batching queue for the in-process cross-encoder: concurrent samples' pairs share its forward passes.

Without it the model is used under a lock one query at a time (one sample's 100 pairs, whatever the
concurrency). Here each caller puts its pairs on one queue and waits; one worker thread takes every waiting
request, waits a few milliseconds for more while the pool is below `pool_pairs`, scores the pool's distinct
pairs in one call (`score_pairs`, which groups them by length) and hands each caller its scores in its own
order. Scores do not depend on which batch a pair lands in (up to float rounding of padded shapes).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

PairScorer = Callable[[list[tuple[str, str]]], list[float]]


@dataclass
class _Request:
    pairs: list[tuple[str, str]]
    done: threading.Event = field(default_factory=threading.Event)
    result: list[float] | None = None
    error: BaseException | None = None


class BatchQueue:
    """Gathers (query, passage) pairs from concurrent callers into shared model calls."""

    def __init__(self, score_pairs: PairScorer, pool_pairs: int = 512, wait_s: float = 0.005) -> None:
        self._score_pairs = score_pairs
        self.pool_pairs = pool_pairs
        self.wait_s = wait_s
        self._waiting: list[_Request] = []
        self._cond = threading.Condition()
        self._worker: threading.Thread | None = None

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        """The scores of `passages` against `query`, in their order (blocks until its batch is scored)."""
        if not passages:
            return []
        request = _Request([(query, p) for p in passages])
        with self._cond:
            self._waiting.append(request)
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run, name="koblex-rerank-batch", daemon=True)
                self._worker.start()
            self._cond.notify_all()
        request.done.wait()
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result

    def _take(self) -> list[_Request] | None:
        """Every waiting request, after up to `wait_s` more for others while the pool is small."""
        with self._cond:
            if not self._cond.wait_for(lambda: bool(self._waiting), timeout=30):
                self._worker = None  # idle: the next caller starts a new worker
                return None
            deadline = time.monotonic() + self.wait_s
            while sum(len(r.pairs) for r in self._waiting) < self.pool_pairs:
                left = deadline - time.monotonic()
                if left <= 0 or not self._cond.wait(timeout=left):
                    break
            taken, self._waiting = self._waiting, []
            return taken

    def _run(self) -> None:
        while (taken := self._take()) is not None:
            distinct = list(dict.fromkeys(pair for request in taken for pair in request.pairs))
            try:
                scored = dict(zip(distinct, self._score_pairs(distinct), strict=True))
            except BaseException as exc:
                for request in taken:
                    request.error = exc
                    request.done.set()
                continue
            for request in taken:
                request.result = [scored[pair] for pair in request.pairs]
                request.done.set()
