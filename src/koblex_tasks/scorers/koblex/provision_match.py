"""`provision_match`: the provisions a method relied on vs the gold provisions, as sets of exact strings.

Precision, recall, F1 and exact match (EM = the sets are equal; both empty counts as 1) per sample, the
paper's definitions. A closed-book method, or a solver that recorded no evidence, is explicitly unscored
(Inspect's NaN sentinel with a reason), never a silent zero.

`rederive(sample, score, params)` recomputes the values from a log's store and metadata with the same
pure function.
"""

from collections.abc import Mapping
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from koblex_tasks.scorers.metrics import value_metrics
from koblex_tasks.tasks.koblex.evidence import ProvisionEvidence
from koblex_tasks.tasks.koblex.spec import KOBLEX, PROVISION_MATCH

KEYS = PROVISION_MATCH.keys  # precision, recall, F1, EM
_STORE = ProvisionEvidence.__name__


def set_match(predicted: list[str], gold: list[str]) -> dict[str, float]:
    pred, ref = set(predicted), set(gold)
    if not pred and not ref:
        return dict.fromkeys(KEYS, 1.0)
    tp = len(pred & ref)
    p = tp / len(pred) if pred else 0.0
    r = tp / len(ref) if ref else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return dict(zip(KEYS, (p, r, f1, float(pred == ref)), strict=True))


def provision_score(method: str, uses_retrieval: bool, predicted: list[str], gold: list[str]) -> Score:
    """The score of one sample's evidence (the scorer's and `rederive`'s one function)."""
    if not method:
        return Score.unscored(reason="no_evidence", explanation="the solver recorded no provision evidence")
    if not uses_retrieval:
        return Score.unscored(reason="closed_book", explanation=f"{method} retrieves no provisions")
    return Score(
        value=set_match(predicted, gold),
        answer="\n".join(predicted),
        metadata={
            "matched": sorted(set(predicted) & set(gold)),
            "n_predicted": len(set(predicted)),
            "n_gold": len(set(gold)),
        },
    )


def rederive(sample: EvalSample, score: Score, params: Mapping[str, Any]) -> dict[str, float | None]:
    """The values `provision_match()` gives this logged sample (None for each key when unscored)."""
    del score, params  # provision_match takes no arguments
    store = sample.store or {}
    result = provision_score(
        str(store.get(f"{_STORE}:method") or ""),
        bool(store.get(f"{_STORE}:uses_retrieval", False)),
        list(store.get(f"{_STORE}:predicted") or []),
        list((sample.metadata or {}).get("gold_provisions") or []),
    )
    if not isinstance(result.value, dict):
        return dict.fromkeys(KEYS, None)
    return {k: float(v) for k, v in result.value.items()}


@scorer(metrics=value_metrics(PROVISION_MATCH, KOBLEX.stratum))
def provision_match() -> Scorer:
    """Provision precision, recall, F1 and exact match against the gold provisions (sets of exact strings)."""

    async def score(state: TaskState, target: Target) -> Score:
        record = store_as(ProvisionEvidence)
        return provision_score(
            record.method, record.uses_retrieval, record.predicted, state.metadata["gold_provisions"]
        )

    return score
