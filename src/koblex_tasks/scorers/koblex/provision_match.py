"""`provision_match`: the provisions a method relied on vs the gold provisions, as sets of exact strings.

Precision, recall, F1 and exact match (EM = the sets are equal; both empty counts as 1) per sample, the
paper's definitions. A closed-book method, or a solver that recorded no evidence, is explicitly unscored
(Inspect's NaN sentinel with a reason), never a silent zero.

The sets hold identities at the corpus' level: paragraphs for the Korean corpus (the paper's metric),
articles for the English article-level corpus, where an article holding a gold paragraph is a hit and two
gold paragraphs of one article are one gold article. The gold comes from the `GoldBook` the task hands the
scorer (by sample id; never through the sample, which the solver sees); each score's metadata records its
`level` and the `gold` set it was compared with. Older logs carry the gold in sample metadata (`gold_keys`,
else paragraph-level `gold_provisions`) and are scored by it.

`rederive(sample, score, params)` recomputes the values from a log's store and recorded gold with the same
pure function; given the official references (params `_reference`, from `koblex_tasks.logs.references`),
a recorded gold set that is not one of the item's official ones is an error, so an edited gold set cannot
carry its re-derived scores.
"""

from collections.abc import Mapping
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from koblex_tasks.benchmarks.koblex.evidence import ProvisionEvidence
from koblex_tasks.benchmarks.koblex.references import REFERENCE_PARAM, gold_sha256
from koblex_tasks.benchmarks.koblex.spec import KOBLEX, PROVISION_MATCH
from koblex_tasks.corpus.provision import PARAGRAPH
from koblex_tasks.data.koblex.dataset import GoldBook
from koblex_tasks.scorers.metrics import value_metrics

KEYS = PROVISION_MATCH.keys  # precision, recall, F1, EM
BOOK_ATTRIBUTE = "gold_book"
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
            "gold": sorted(set(gold)),
            "predicted": sorted(
                set(predicted)
            ),  # the evidence again: `inspect eval-retry` may lose the store
            "matched": sorted(set(predicted) & set(gold)),
            "n_predicted": len(set(predicted)),
            "n_gold": len(set(gold)),
        },
    )


def logged_gold(sample: EvalSample, score: Score) -> tuple[list[str] | None, str]:
    """The gold set a logged score was compared with (its metadata; older logs: the sample's metadata)."""
    meta = score.metadata or {}
    if "gold" in meta:
        return list(meta["gold"] or []), str(meta.get("level") or PARAGRAPH)
    return gold_of(sample.metadata or {})


def rederive(sample: EvalSample, score: Score, params: Mapping[str, Any]) -> dict[str, float | None]:
    """The values `provision_match()` gives this logged sample (None for each key when unscored)."""
    store = sample.store or {}
    gold, level = logged_gold(sample, score)
    if f"{_STORE}:method" not in store and "predicted" in (score.metadata or {}):
        # a sample recovered by `inspect eval-retry` can come back without its store: the score's own record
        method, retrieves, predicted = (
            "recorded in the score",
            True,
            list((score.metadata or {})["predicted"]),
        )
    else:
        method = str(store.get(f"{_STORE}:method") or "")
        retrieves = bool(store.get(f"{_STORE}:uses_retrieval", False))
        predicted = list(store.get(f"{_STORE}:predicted") or [])
    result = provision_score(method, retrieves, predicted, gold, level)
    if not isinstance(result.value, dict):
        return dict.fromkeys(KEYS, None)
    reference = params.get(REFERENCE_PARAM)
    if reference is not None and gold_sha256(gold or []) not in reference.get("gold_sha256", {}).values():
        raise ValueError("its gold provisions are not the official ones (the benchmark's reference manifest)")
    return {k: float(v) for k, v in result.value.items()}


def sample_gold(gold: GoldBook | None, state: TaskState) -> tuple[list[str] | None, str, list[str]]:
    """A sample's gold identities, their level and the gold paragraphs' texts: from the task's gold book,
    else (old logs) the sample's metadata."""
    entry = gold.get(state.sample_id) if isinstance(gold, GoldBook) else None
    if entry is not None:
        return list(entry.keys), entry.identity.split(":")[0], list(entry.provisions)
    keys, level = gold_of(state.metadata)
    return keys, level, list(state.metadata.get("gold_provisions") or [])


@scorer(metrics=value_metrics(PROVISION_MATCH, KOBLEX.stratum))
def provision_match(gold: GoldBook | None = None) -> Scorer:
    """Provision precision, recall, F1 and exact match against the gold provisions (sets of exact strings, at
    the corpus' level: paragraphs, or articles for an article-level corpus).

    Args:
        gold: each item's gold, by sample id (the task's `GoldBook`); None: the sample's metadata (old logs).
    """

    async def score(state: TaskState, target: Target) -> Score:
        keys, level, _ = sample_gold(gold, state)
        record = store_as(ProvisionEvidence)
        return provision_score(record.method, record.uses_retrieval, record.predicted, keys, level)

    setattr(score, BOOK_ATTRIBUTE, gold)
    return score


def book_of(built: Scorer) -> GoldBook | None:
    """The gold book a built `provision_match` scores against (what a task handed it; for tests, audits)."""
    book = getattr(built, BOOK_ATTRIBUTE, None)
    return book if isinstance(book, GoldBook) else None
