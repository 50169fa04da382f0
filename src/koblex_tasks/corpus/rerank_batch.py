"""One batching queue for the in-process cross-encoder: concurrent samples' pairs share its forward passes.

Without it the model is used under a lock one query at a time (one sample's 100 pairs in batches of 50, each
padded to its longest pair, whatever the concurrency). Here each caller puts its items (pairs, or pairs
already tokenised) on one queue and waits; one worker thread takes every waiting request, waits a few
milliseconds for more while the pool is below `pool_pairs`, scores the pool's distinct items in one call and
hands each caller its scores in its own order. The cross-encoder scores a pool sorted by token length, cut into
micro-batches of bounded padded tokens (`length_batches`): on a CPU the cost is per token, padding included,
and at k=100 a query's batches are about half padding. Scores do not depend on which batch a pair lands in
(up to float rounding of padded shapes).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

Item = TypeVar("Item", bound=Hashable)
Scorer = Callable[[list[Item]], list[float]]


def length_batches(lengths: Sequence[int], max_tokens: int) -> list[list[int]]:
    """Indices of `lengths` sorted by length (ties in their order), cut into batches whose padded size
    (pairs x longest) stays within `max_tokens`; a pair longer than that is a batch of its own."""
    batches: list[list[int]] = []
    batch: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        if batch and (len(batch) + 1) * lengths[i] > max_tokens:
            batches.append(batch)
            batch = []
        batch.append(i)
    if batch:
        batches.append(batch)
    return batches


@dataclass
class _Request(Generic[Item]):
    items: list[Item]
    done: threading.Event = field(default_factory=threading.Event)
    result: list[float] | None = None
    error: BaseException | None = None


class BatchQueue(Generic[Item]):
    """Gathers the items of concurrent callers into shared model calls."""

    def __init__(self, score: Scorer[Item], pool_pairs: int = 1024, wait_s: float = 0.005) -> None:
        self._score = score
        self.pool_pairs = pool_pairs
        self.wait_s = wait_s
        self._waiting: list[_Request[Item]] = []
        self._cond = threading.Condition()
        self._worker: threading.Thread | None = None

    def scores(self: BatchQueue[tuple[str, str]], query: str, passages: Sequence[str]) -> list[float]:
        """The scores of `passages` against `query`, in their order (blocks until its batch is scored)."""
        return self.submit([(query, p) for p in passages])

    def submit(self, items: list[Item]) -> list[float]:
        """The scores of `items`, in their order (blocks until its batch is scored)."""
        if not items:
            return []
        request = _Request(items)
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

    def _take(self) -> list[_Request[Item]] | None:
        """Every waiting request, after up to `wait_s` more for others while the pool is small."""
        with self._cond:
            if not self._cond.wait_for(lambda: bool(self._waiting), timeout=30):
                self._worker = None  # idle: the next caller starts a new worker
                return None
            deadline = time.monotonic() + self.wait_s
            while sum(len(r.items) for r in self._waiting) < self.pool_pairs:
                left = deadline - time.monotonic()
                if left <= 0 or not self._cond.wait(timeout=left):
                    break
            taken, self._waiting = self._waiting, []
            return taken

    def _run(self) -> None:
        while (taken := self._take()) is not None:
            distinct = list(dict.fromkeys(item for request in taken for item in request.items))
            try:
                scored = dict(zip(distinct, self._score(distinct), strict=True))
            except BaseException as exc:
                for request in taken:
                    request.error = exc
                    request.done.set()
                continue
            for request in taken:
                request.result = [scored[item] for item in request.items]
                request.done.set()
