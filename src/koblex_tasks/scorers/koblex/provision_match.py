"""`provision_match`: the provisions a method relied on vs the gold provisions, as sets of exact strings.

Precision, recall, F1 and exact match (EM = the sets are equal; both empty counts as 1) per sample, the
paper's definitions. A closed-book method, or a solver that recorded no evidence, is explicitly unscored
(Inspect's NaN sentinel with a reason), never a silent zero.

The sets hold identities at the corpus' level (sample metadata `gold_keys` and `provision_level`, see
`tasks.koblex.dataset`): paragraphs for the Korean corpus (the paper's metric), articles for the English
article-level corpus, where an article holding a gold paragraph is a hit and two gold paragraphs of one
article are one gold article. Each score's metadata names its `level`. Logs from before `gold_keys` existed
are paragraph-level and scored by `gold_provisions`.

`rederive(sample, score, params)` recomputes the values from a log's store and metadata with the same
pure function.
"""

from collections.abc import Mapping
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from koblex_tasks.benchmarks.koblex.evidence import ProvisionEvidence
from koblex_tasks.benchmarks.koblex.spec import KOBLEX, PROVISION_MATCH
from koblex_tasks.corpus.provision import PARAGRAPH
from koblex_tasks.scorers.metrics import value_metrics

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


def gold_of(metadata: Mapping[str, Any]) -> tuple[list[str] | None, str]:
    """A sample's gold identities and their level (`gold_provisions` at paragraph level for older logs;
    None when the sample has neither)."""
    if "gold_keys" in metadata:
        return list(metadata["gold_keys"] or []), str(metadata.get("provision_level") or PARAGRAPH)
    if "gold_provisions" in metadata:
        return list(metadata["gold_provisions"] or []), PARAGRAPH
    return None, PARAGRAPH


def provision_score(
    method: str, uses_retrieval: bool, predicted: list[str], gold: list[str] | None, level: str = PARAGRAPH
) -> Score:
    """The score of one sample's evidence (the scorer's and `rederive`'s one function)."""
    if not method:
        return Score.unscored(
            reason="no_evidence",
            explanation="the solver recorded no provision evidence",
            metadata={"level": level},
        )
    if not uses_retrieval:
        return Score.unscored(
            reason="closed_book", explanation=f"{method} retrieves no provisions", metadata={"level": level}
        )
    if gold is None:
        return Score.unscored(
            reason="no_gold", explanation="the sample has no gold provisions (metadata 'gold_keys')"
        )
    return Score(
        value=set_match(predicted, gold),
        answer="\n".join(predicted),
        metadata={
            "level": level,
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
        *gold_of(sample.metadata or {}),
    )
    if not isinstance(result.value, dict):
        return dict.fromkeys(KEYS, None)
    return {k: float(v) for k, v in result.value.items()}


@scorer(metrics=value_metrics(PROVISION_MATCH, KOBLEX.stratum))
def provision_match() -> Scorer:
    """Provision precision, recall, F1 and exact match against the gold provisions (sets of exact strings, at
    the corpus' level: paragraphs, or articles for an article-level corpus)."""

    async def score(state: TaskState, target: Target) -> Score:
        record = store_as(ProvisionEvidence)
        return provision_score(
            record.method, record.uses_retrieval, record.predicted, *gold_of(state.metadata)
        )

    return score
