"""`provision_match`: the provisions a method relied on vs the gold provisions, as sets of exact strings.

Precision, recall, F1 and exact match (EM = the sets are equal; both empty counts as 1) per sample, the
paper's definitions. A closed-book method, or a solver that recorded no evidence, is explicitly unscored
(Inspect's NaN sentinel with a reason), never a silent zero.
"""

from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from koblex_tasks.scorers.metrics import value_metrics
from koblex_tasks.tasks.koblex.evidence import ProvisionEvidence
from koblex_tasks.tasks.koblex.spec import KOBLEX, PROVISION_MATCH

KEYS = PROVISION_MATCH.keys  # precision, recall, F1, EM


def set_match(predicted: list[str], gold: list[str]) -> dict[str, float]:
    pred, ref = set(predicted), set(gold)
    if not pred and not ref:
        return dict.fromkeys(KEYS, 1.0)
    tp = len(pred & ref)
    p = tp / len(pred) if pred else 0.0
    r = tp / len(ref) if ref else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return dict(zip(KEYS, (p, r, f1, float(pred == ref)), strict=True))


@scorer(metrics=value_metrics(PROVISION_MATCH, KOBLEX.stratum))
def provision_match() -> Scorer:
    """Provision precision, recall, F1 and exact match against the gold provisions (sets of exact strings)."""

    async def score(state: TaskState, target: Target) -> Score:
        record = store_as(ProvisionEvidence)
        if not record.method:
            return Score.unscored(
                reason="no_evidence", explanation="the solver recorded no provision evidence"
            )
        if not record.uses_retrieval:
            return Score.unscored(
                reason="closed_book", explanation=f"{record.method} retrieves no provisions"
            )
        gold = state.metadata["gold_provisions"]
        result = set_match(record.predicted, gold)
        hits = sorted(set(record.predicted) & set(gold))
        return Score(
            value=result,
            answer="\n".join(record.predicted),
            metadata={"matched": hits, "n_predicted": len(set(record.predicted)), "n_gold": len(set(gold))},
        )

    return score
