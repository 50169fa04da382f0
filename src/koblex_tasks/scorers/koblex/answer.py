"""The answer a KoBLEX scorer scores: the method's own extraction applied to the completion as written.

Solvers leave `state.output.completion` untouched and record their extraction rule (`AnswerRule`) in the
`ProvisionEvidence` store; every scorer (token F1, LF-Eval) and every re-derivation from a log reads the answer
through the functions here, so a live run, `inspect score` and an `inspect eval-retry` recovery agree.
"""

from collections.abc import Mapping
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from koblex_tasks.benchmarks.koblex.evidence import AnswerRule, ProvisionEvidence

RULE_STORE_KEY = f"{ProvisionEvidence.__name__}:answer_rule"  # how a log's `sample.store` names the rule


def answer_from(completion: str | None, rule: AnswerRule) -> str:
    """The answer `rule` reads out of `completion` (None or empty: the empty answer)."""
    return rule.apply(completion or "")


def extract_answer(state: TaskState) -> str:
    """The answer of a running sample: its completion through the rule its solver recorded."""
    return answer_from(state.output.completion, store_as(ProvisionEvidence).rule)


def rule_of_store(store: Mapping[str, Any]) -> AnswerRule:
    """The rule recorded in a logged sample's store (no rule: `whole`, the completion as written)."""
    return AnswerRule.from_dict(store.get(RULE_STORE_KEY))


def sample_answer(sample: EvalSample) -> str:
    """The answer of a logged sample, extracted exactly as the scorer did when it ran."""
    completion = sample.output.completion if sample.output else ""
    return answer_from(completion, rule_of_store(sample.store or {}))
