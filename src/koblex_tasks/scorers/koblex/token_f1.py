"""`token_f1`: word-overlap F1 between the answer and the reference answer.

The answer is the method's extraction of the completion (`scorers.koblex.answer`: the text after the last
"Answer:" for ParSeR and the naive baselines, the multi-hop methods' own rules, none for replays). Default:
the whole answer (a leading `<think>` block removed), full precision. `official=True` reproduces the paper's
script: prediction cut to its first 800 characters, per-item F1 rounded to 4 decimals. An empty answer
scores 0 and is flagged (`empty_answer`), so a silent generation failure is visible in the metrics.

`rederive(sample, score, params)` recomputes the values from a log with the same pure function; a sample
whose store `inspect eval-retry` lost is read with the answer rule its score recorded.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from koblex_tasks.benchmarks.koblex.evidence import AnswerRule, ProvisionEvidence
from koblex_tasks.benchmarks.koblex.spec import KOBLEX, TOKEN_F1
from koblex_tasks.scorers.koblex.answer import RULE_STORE_KEY, answer_from, extract_answer, sample_answer
from koblex_tasks.scorers.koblex.text import scored_answer
from koblex_tasks.scorers.koblex.text import token_f1 as f1_parts
from koblex_tasks.scorers.metrics import value_metrics


@dataclass(frozen=True)
class TokenF1:
    prediction: str  # what was compared with the reference
    precision: float
    recall: float
    f1: float

    @property
    def empty(self) -> bool:
        return not self.prediction.strip()

    @property
    def values(self) -> dict[str, float]:
        return {"token_f1": self.f1, "empty_answer": float(self.empty)}


def token_f1_of(answer: str, reference: str, official: bool) -> TokenF1:
    """Token F1 of an extracted answer against the reference (the scorer's and `rederive`'s one function)."""
    prediction = scored_answer(answer, official)
    precision, recall, f1 = f1_parts(prediction, reference)
    return TokenF1(prediction, precision, recall, round(f1, 4) if official else f1)


def rederive(sample: EvalSample, score: Score, params: Mapping[str, Any]) -> dict[str, float | None]:
    """The values `token_f1(**params)` gives this logged sample (its completion, rule and target)."""
    reference = sample.target if isinstance(sample.target, str) else "\n".join(sample.target)
    store = sample.store or {}
    if RULE_STORE_KEY not in store and "answer_rule" in (score.metadata or {}):
        # a sample recovered by `inspect eval-retry` can come back without its store: the rule the score recorded
        completion = sample.output.completion if sample.output else ""
        answer = answer_from(completion, AnswerRule.from_dict((score.metadata or {})["answer_rule"]))
    else:
        answer = sample_answer(sample)
    result = token_f1_of(answer, reference, bool(params.get("official", False)))
    return dict(result.values)


@scorer(metrics=value_metrics(TOKEN_F1, KOBLEX.stratum, extra={"empty_answer": [mean()]}))
def token_f1(official: bool = False) -> Scorer:
    """Token F1 against the reference answer, and whether the answer was empty (scored 0, counted)."""

    async def score(state: TaskState, target: Target) -> Score:
        result = token_f1_of(extract_answer(state), target.text, official)
        return Score(
            value=result.values,
            answer=result.prediction,
            metadata={
                "precision": result.precision,
                "recall": result.recall,
                "official": official,
                "answer_rule": store_as(ProvisionEvidence).answer_rule,  # kept if eval-retry loses the store
            },
            explanation="empty answer: scored 0" if result.empty else None,
        )

    return score
