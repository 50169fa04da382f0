"""Hybrid retrieval: reciprocal rank fusion (Cormack et al., 2009) of several rankings.

    score(d) = Σ_i  w_i / (rrf_k + rank_i(d))

with 1-based ranks; a document absent from ranking i gets nothing from it. Only ranks matter, so BM25 and
cosine scores need no calibration. Ties are broken by the best rank the document reached in any ranking, then
by the position of the ranking that gave it (earlier rankings first), then by the document id.
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

DEFAULT_RRF_K = 60.0
Doc = TypeVar("Doc", bound=Hashable)


@dataclass(frozen=True)
class Fused(Generic[Doc]):
    """One fused document: its RRF score and its 1-based rank in each input ranking (None = absent)."""

    doc: Doc
    score: float
    ranks: tuple[int | None, ...]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Doc]],
    weights: Sequence[float] | None = None,
    rrf_k: float = DEFAULT_RRF_K,
    k: int | None = None,
) -> list[Fused[Doc]]:
    """Fuse best-first rankings of document ids into one, best first, cut to `k` (None = all).

    A document repeated within one ranking counts at its first (best) position only.
    """
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    if len(weights) != len(rankings):
        raise ValueError(f"{len(rankings)} rankings but {len(weights)} weights")
    if any(w < 0 for w in weights):
        raise ValueError(f"weights must be non-negative, got {weights}")
    if rrf_k < 0:
        raise ValueError(f"rrf_k must be non-negative, got {rrf_k}")
    ranks: dict[Doc, list[int | None]] = {}
    for i, ranking in enumerate(rankings):
        for position, doc in enumerate(ranking, start=1):
            slots = ranks.setdefault(doc, [None] * len(rankings))
            if slots[i] is None:
                slots[i] = position
    fused = [
        Fused(
            doc=doc,
            score=sum(w / (rrf_k + r) for w, r in zip(weights, slots, strict=True) if r is not None),
            ranks=tuple(slots),
        )
        for doc, slots in ranks.items()
    ]

    def order(item: Fused[Doc]) -> tuple:
        present = [(r, i) for i, r in enumerate(item.ranks) if r is not None]
        best_rank, first_list = min(present)
        return (-item.score, best_rank, first_list, _sortable(item.doc))

    fused.sort(key=order)
    return fused if k is None else fused[:k]


def _sortable(doc: object) -> tuple:
    return (0, doc, "") if isinstance(doc, int | float) else (1, 0, str(doc))
