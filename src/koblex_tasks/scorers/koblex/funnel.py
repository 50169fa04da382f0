"""`retrieval_funnel`: where along retrieve -> rerank -> select the gold provisions are found or lost.

Per sample, shares of the item's gold provisions (at the corpus' level, as `provision_match` compares them):

- `gold_recall_bm25`: found in any first-stage top-k list (BM25, or the dense/hybrid retriever);
- `gold_recall_rerank`: found in any list shown for selection (the reranked top l);
- `gold_recall_selected`: among the provisions the method finally used (`predicted`);
- `guess_overlap` (ParSeR): token F1 (the paper's answer normalisation) of each parametric provision the model
  guessed with its closest gold paragraph, averaged over the guesses.

The first two need the stage lists a solver records (`ProvisionEvidence.first_stage` / `reranked`, ParSeR's);
for a method that records none they are unscored, as is `guess_overlap` without guesses. Closed-book methods
and items without gold are unscored. The score records the gold it compared with, so `rederive` recomputes
every value from the log's store with the same function (and refuses a gold set that is not official).
"""

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from koblex_tasks.benchmarks.koblex.evidence import ProvisionEvidence
from koblex_tasks.benchmarks.koblex.references import REFERENCE_PARAM, gold_sha256
from koblex_tasks.benchmarks.koblex.spec import KOBLEX, RETRIEVAL_FUNNEL
from koblex_tasks.data.koblex.dataset import GoldBook
from koblex_tasks.scorers.koblex.provision_match import gold_of, sample_gold
from koblex_tasks.scorers.koblex.text import token_f1
from koblex_tasks.scorers.metrics import value_metrics

KEYS = RETRIEVAL_FUNNEL.keys
NOT_APPLICABLE = float("nan")  # Inspect's per-key unscored sentinel: left out of that key's mean
_STORE = ProvisionEvidence.__name__
FIELDS = ("method", "uses_retrieval", "staged", "first_stage", "reranked", "predicted", "guesses")


def gold_recall(lists: Sequence[Sequence[str]], gold: Sequence[str]) -> float:
    """Share of the distinct gold keys found in any of `lists`."""
    wanted = set(gold)
    found = wanted.intersection(key for keys in lists for key in keys)
    return len(found) / len(wanted)


def guess_overlap(guesses: Sequence[str], gold_texts: Sequence[str]) -> float:
    """Mean over the guesses of the token F1 with the closest gold paragraph."""
    best = [max(token_f1(guess, text)[2] for text in gold_texts) for guess in guesses]
    return sum(best) / len(best)


def funnel_values(
    record: Mapping[str, Any], gold: Sequence[str], gold_texts: Sequence[str]
) -> dict[str, float]:
    """The four values of one sample's evidence (`record`: the store's fields), NaN where one does not apply."""
    staged = bool(record.get("staged"))
    guesses = list(record.get("guesses") or [])
    return {
        "gold_recall_bm25": gold_recall(record.get("first_stage") or [], gold) if staged else NOT_APPLICABLE,
        "gold_recall_rerank": gold_recall(record.get("reranked") or [], gold) if staged else NOT_APPLICABLE,
        "gold_recall_selected": gold_recall([record.get("predicted") or []], gold),
        "guess_overlap": guess_overlap(guesses, gold_texts) if guesses and gold_texts else NOT_APPLICABLE,
    }


def funnel_score(
    record: Mapping[str, Any], gold: list[str] | None, gold_texts: list[str], level: str
) -> Score:
    """The score of one sample (the scorer's and `rederive`'s one function)."""
    if not record.get("method"):
        return Score.unscored(reason="no_evidence", explanation="the solver recorded no provision evidence")
    if not record.get("uses_retrieval"):
        return Score.unscored(reason="closed_book", explanation=f"{record['method']} retrieves no provisions")
    if not gold:
        return Score.unscored(reason="no_gold", explanation="the sample has no gold provisions")
    wanted = set(gold)
    found = {
        stage: sorted(wanted.intersection(k for keys in record.get(stage) or [] for k in keys))
        for stage in ("first_stage", "reranked")
    }
    recorded = {  # the evidence again, reduced to what the values read (`inspect eval-retry` may lose the store)
        "method": record["method"],
        "uses_retrieval": True,
        "staged": bool(record.get("staged")),
        "first_stage": [found["first_stage"]],
        "reranked": [found["reranked"]],
        "predicted": sorted(wanted.intersection(record.get("predicted") or [])),
        "guesses": list(record.get("guesses") or []),
    }
    return Score(
        value=funnel_values(record, gold, gold_texts),
        metadata={
            "level": level,
            "gold": sorted(wanted),
            "gold_texts": list(gold_texts),
            "recorded": recorded,
        },
    )


def _stored(store: Mapping[str, Any]) -> dict[str, Any]:
    """The evidence fields of a logged sample's store, by field name."""
    prefix = f"{_STORE}:"
    return {key[len(prefix) :]: value for key, value in store.items() if key.startswith(prefix)}


def rederive(sample: EvalSample, score: Score, params: Mapping[str, Any]) -> dict[str, float | None]:
    """The values `retrieval_funnel()` gives this logged sample (None where unscored)."""
    meta = score.metadata or {}
    gold = list(meta["gold"]) if "gold" in meta else gold_of(sample.metadata or {})[0]
    stored = _stored(sample.store or {})
    if "method" not in stored and isinstance(meta.get("recorded"), dict):
        stored = dict(meta["recorded"])  # a sample recovered without its store: the score's own record
    result = funnel_score(stored, gold, list(meta.get("gold_texts") or []), str(meta.get("level", "")))
    if not isinstance(result.value, dict):
        return dict.fromkeys(KEYS, None)
    reference = params.get(REFERENCE_PARAM)
    if reference is not None and gold_sha256(gold or []) not in reference.get("gold_sha256", {}).values():
        raise ValueError("its gold provisions are not the official ones (the benchmark's reference manifest)")
    values: dict[str, Any] = result.value
    return {k: None if v != v else float(v) for k, v in values.items()}


@scorer(metrics=value_metrics(RETRIEVAL_FUNNEL, KOBLEX.stratum))
def retrieval_funnel(gold: GoldBook | None = None) -> Scorer:
    """Gold recall after the first stage, after reranking and after selection, and ParSeR's guess overlap.

    Args:
        gold: each item's gold, by sample id (the task's `GoldBook`); None: the sample's metadata (old logs).
    """

    async def score(state: TaskState, target: Target) -> Score:
        keys, level, texts = sample_gold(gold, state)
        evidence = store_as(ProvisionEvidence)
        record = {name: getattr(evidence, name) for name in FIELDS}
        return funnel_score(record, keys, texts, level)

    return score
