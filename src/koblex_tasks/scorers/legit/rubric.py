"""The LEGIT issue-tree rubric: one judge call per issue node, then the 5/2/3 arithmetic.

Per node (root included) the judge gets the paper's prompt (`prompts/legit/judge.v1.txt`, the official
`prompts/evaluate_issue_in_response.txt` verbatim) with the answer, the node's summary, its claims
(`claimer: content` lines) and its conclusion, and replies with JSON
`{"rationales": str, "contains_issue": bool, "correct_conclusion": bool}`.

Score (0-10), with N = the number of non-root nodes *in the tree*:

* `rule="paper"` (the paper's formula; also the official `reasoning_task_evaluate_legit.py`):
  final order 5 if the root's `correct_conclusion`; each covered non-root node adds 2/N (coverage) and,
  when its conclusion is also correct, 3/N more (correctness).
* `rule="official"` (`reasoning_task_evaluate.py`, the script whose outputs were released as
  `results/*_evaluator_*.jsonl`): a node whose *descendant* is covered but wrong (`contains_issue` and not
  `correct_conclusion`) scores 0. The root is scored 5 only if it is covered, correct and no node below it is
  covered-but-wrong. The official script tests descendancy with `sub_id.startswith(issue_id)`, so issue "1"
  is zeroed by a wrong "10" or "11.2"; we use real tree ancestry instead (documented deviation; the two
  agree on every tree with fewer than 10 children per node, which covers the 20-record sample).

Deviations from the official scripts, on purpose:

* The official scripts drop an issue whose judge call or JSON parse fails and then divide by
  `len(judged issues) - 1`, so a failure silently changes N (and raises every other issue's weight). Here an
  unparsable reply is retried up to `retries` more times; if it is still unparsable the issue is *unscored*,
  and so is the sample's total (NaN in every score component), while `judge_failure_rate` stays a number.
* The official OpenAI path requests `response_format=json_object` and returns "" on a parse failure; we ask
  for plain text and parse `<OUTPUT>{...}</OUTPUT>`, fenced or bare JSON (see `parse_judge_reply`).
* The official call sends an empty system prompt; we send only the user message.
"""

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import anyio
from inspect_ai.model import ChatMessageUser, Model, ModelUsage
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from koblex_tasks.judge_role import GRADER_ROLE
from koblex_tasks.prompts import load_prompt
from koblex_tasks.scorers.judge import JudgeConfig, total_usage
from koblex_tasks.scorers.legit.metrics import pooled
from koblex_tasks.scorers.metrics import value_metrics
from koblex_tasks.tasks.legit.issues import ROOT_ID, Issue, descendants, issues_from_metadata
from koblex_tasks.tasks.legit.spec import (
    CORRECTNESS_POINTS,
    COVERAGE_POINTS,
    FINAL_ORDER_POINTS,
    LEGIT,
    LEGIT_RUBRIC,
)

RULES: tuple[str, ...] = ("paper", "official")
JUDGE_PROMPT = "legit/judge"
# A judge grades: deterministic by default (the provider's own default is often 1.0).
DEFAULT_JUDGE_TEMPERATURE = 0.0

_OUTPUT_TAG = re.compile(r"<OUTPUT>(.*?)(?:</OUTPUT>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


# ----------------------------------------------------------------------------------------------------------
# Judge replies


@dataclass(frozen=True)
class Verdict:
    contains_issue: bool
    correct_conclusion: bool
    rationale: str | None = None


def _json_object(text: str) -> dict[str, Any] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    blob = text[start : end + 1]
    for candidate in (blob, blob.replace("{{", "{").replace("}}", "}")):
        try:
            obj = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def parse_judge_reply(text: str) -> Verdict | None:
    """The verdict in a judge reply, or None when it is unparsable.

    Accepts the prompt's `<OUTPUT>{...}</OUTPUT>` (the closing tag may be missing: the prompt ends with
    `<OUTPUT>`), a ```json fence, or bare JSON. Both flags must be JSON booleans; anything else (missing keys,
    "yes", 1) is unparsable rather than guessed.
    """
    candidates = [m.group(1) for m in _OUTPUT_TAG.finditer(text)]
    candidates += [m.group(1) for m in _FENCE.finditer(text)]
    candidates.append(text)
    for candidate in candidates:
        obj = _json_object(candidate)
        if obj is None:
            continue
        contains, correct = obj.get("contains_issue"), obj.get("correct_conclusion")
        if isinstance(contains, bool) and isinstance(correct, bool):
            rationale = obj.get("rationales", obj.get("rationale"))
            return Verdict(contains, correct, rationale if isinstance(rationale, str) else None)
    return None


def judge_prompt_text(response: str, issue: Issue, version: str = "v1") -> str:
    return load_prompt(JUDGE_PROMPT, version).render(
        response=response, summary=issue.summary, claims=issue.claims_text(), conclusion=issue.conclusion
    )


# ----------------------------------------------------------------------------------------------------------
# Arithmetic


@dataclass(frozen=True)
class RubricResult:
    """Score components of one answer; NaN components when any node is unlabelled."""

    legit_score: float
    final_order: float
    coverage: float
    correctness: float
    issue_scores: dict[str, float | None]  # per node; None when it cannot be determined

    @property
    def scored(self) -> bool:
        return not math.isnan(self.legit_score)


def _blocked(issue_id: str, labels: dict[str, Verdict | None]) -> bool | None:
    """Official rule: some proper descendant is covered but wrong (None if undeterminable)."""
    unknown = False
    for other in descendants(issue_id, labels):
        verdict = labels[other]
        if verdict is None:
            unknown = True
        elif verdict.contains_issue and not verdict.correct_conclusion:
            return True
    return None if unknown else False


def _issue_score(
    issue_id: str, verdict: Verdict, n: int, rule: str, blocked: bool
) -> tuple[float, float, float]:
    """(final order, coverage, correctness) points of one labelled node."""
    if issue_id == ROOT_ID:
        if rule == "paper":
            return (FINAL_ORDER_POINTS if verdict.correct_conclusion else 0.0), 0.0, 0.0
        ok = verdict.contains_issue and verdict.correct_conclusion and not blocked
        return (FINAL_ORDER_POINTS if ok else 0.0), 0.0, 0.0
    if n == 0 or not verdict.contains_issue or (rule == "official" and blocked):
        return 0.0, 0.0, 0.0
    coverage = COVERAGE_POINTS / n
    correctness = CORRECTNESS_POINTS / n if verdict.correct_conclusion else 0.0
    return 0.0, coverage, correctness


def rubric_score(
    issue_ids: list[str], labels: dict[str, Verdict | None], rule: str = "paper"
) -> RubricResult:
    """Apply the rubric to the judge's labels for every node of one tree (None = unparsable).

    N is the number of non-root nodes in the tree, whatever the judge managed to label.
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if ROOT_ID not in issue_ids:
        raise ValueError("the issue tree has no root")
    missing = [i for i in issue_ids if i not in labels]
    if missing:
        raise ValueError(f"no label (not even 'unparsable') for issues {missing}")
    n = len(issue_ids) - 1
    tree_labels = {i: labels[i] for i in issue_ids}
    per_issue: dict[str, float | None] = {}
    totals = [0.0, 0.0, 0.0]
    complete = True
    for issue_id in issue_ids:
        verdict = tree_labels[issue_id]
        if verdict is None:
            per_issue[issue_id] = None
            complete = False
            continue
        blocked = False
        if rule == "official":
            status = _blocked(issue_id, tree_labels)
            if status is None:
                # A wrong-but-covered unlabelled descendant could still zero this node.
                per_issue[issue_id] = None
                complete = False
                continue
            blocked = status
        parts = _issue_score(issue_id, verdict, n, rule, blocked)
        per_issue[issue_id] = sum(parts)
        totals = [t + p for t, p in zip(totals, parts, strict=True)]
    if not complete:
        nan = float("nan")
        return RubricResult(nan, nan, nan, nan, per_issue)
    final_order, coverage, correctness = totals
    return RubricResult(final_order + coverage + correctness, final_order, coverage, correctness, per_issue)


# ----------------------------------------------------------------------------------------------------------
# Scorer


@dataclass
class IssueJudgement:
    issue_id: str
    verdict: Verdict | None = None
    replies: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    usage: ModelUsage = field(default_factory=ModelUsage)


async def judge_issue(
    judge: Model,
    response: str,
    issue: Issue,
    retries: int,
    judge_config: JudgeConfig,
    prompt_version: str = "v1",
) -> IssueJudgement:
    """Ask the judge about one node; retry up to `retries` more times while the reply is unparsable."""
    prompt = judge_prompt_text(response, issue, prompt_version)
    result = IssueJudgement(issue.id)
    config = judge_config.generate_config(temperature=DEFAULT_JUDGE_TEMPERATURE)
    for _ in range(retries + 1):
        output = await judge_config.generate(judge, [ChatMessageUser(content=prompt)], config)
        if output.usage is not None:
            result.usage = result.usage + output.usage
        text = output.completion
        result.replies.append(text)
        if output.error:
            result.errors.append(str(output.error))
        verdict = parse_judge_reply(text)
        if verdict is not None:
            result.verdict = verdict
            break
    return result


def _issue_metadata(judgement: IssueJudgement, score: float | None) -> dict[str, Any]:
    verdict = judgement.verdict
    return {
        "contains_issue": verdict.contains_issue if verdict else None,
        "correct_conclusion": verdict.correct_conclusion if verdict else None,
        "rationale": verdict.rationale if verdict else None,
        "score": score,
        "parsed": verdict is not None,
        "attempts": len(judgement.replies),
        "raw": judgement.replies[-1] if judgement.replies else None,
        # earlier unparsable replies, when the judge was retried
        "raw_retried": judgement.replies[:-1],
        "errors": judgement.errors,
    }


def score_value(result: RubricResult, failures: int, n_issues: int) -> dict[str, float]:
    return {
        "legit_score": result.legit_score,
        "final_order": result.final_order,
        "coverage": result.coverage,
        "correctness": result.correctness,
        "judge_failure_rate": failures / n_issues if n_issues else 0.0,
    }


@scorer(metrics=value_metrics(LEGIT_RUBRIC, LEGIT.stratum, extra={"judge_failure_rate": [mean(), pooled()]}))
def legit_rubric(
    rule: str = "paper",
    retries: int = 2,
    prompt_version: str = "v1",
    concurrency: int = 8,
    model_role: str = GRADER_ROLE,
    temperature: float | None = None,
    max_tokens: int | None = None,
    cache: bool | str = False,
) -> Scorer:
    """LEGIT issue-tree rubric with a judge bound to `model_role` (required: never the model under test).

    Args:
        rule: "paper" (5/2/3 formula) or "official" (also zero nodes with a covered-but-wrong descendant).
        retries: extra judge calls per node while its reply is unparsable.
        prompt_version: version of `prompts/legit/judge`.
        concurrency: judge calls in flight per sample.
        model_role: the model role of the judge (default "grader").
        temperature: judge temperature (default 0).
        max_tokens: judge reply length (default: the provider's).
        cache: cache judge replies with Inspect's cache (True, or an expiry such as "1D"; default off).
    """
    judge_config = JudgeConfig(role=model_role, temperature=temperature, max_tokens=max_tokens, cache=cache)
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if retries < 0:
        raise ValueError("retries must be >= 0")
    prompt_ref = load_prompt(JUDGE_PROMPT, prompt_version).ref

    async def score(state: TaskState, target: Target) -> Score:
        judge = judge_config.model()
        issues = issues_from_metadata(state.metadata)
        response = state.output.completion
        judgements: dict[str, IssueJudgement] = {}
        limiter = anyio.Semaphore(max(1, concurrency))

        async def run(issue: Issue) -> None:
            async with limiter:
                judgements[issue.id] = await judge_issue(
                    judge, response, issue, retries, judge_config, prompt_version
                )

        async with anyio.create_task_group() as group:
            for issue in issues:
                group.start_soon(run, issue)

        ids = [i.id for i in issues]
        labels = {i: judgements[i].verdict for i in ids}
        result = rubric_score(ids, labels, rule)
        failures = sum(1 for i in ids if labels[i] is None)
        metadata = {
            "doc_id": state.metadata.get("doc_id", state.sample_id),
            "difficulty": state.metadata.get("difficulty"),
            "rule": rule,
            "judge_model": str(judge),
            "judge_prompt": prompt_ref,
            "judge_usage": total_usage(j.usage for j in judgements.values()),
            "judge_config": judge_config.describe(),
            "retries": retries,
            "n_issues": len(ids),
            "n_unparsable": failures,
            "issues": {i: _issue_metadata(judgements[i], result.issue_scores[i]) for i in ids},
        }
        value = score_value(result, failures, len(ids))
        if result.scored:
            explanation = (
                f"{result.legit_score:.3f}/10 = final order {result.final_order:g} + coverage "
                f"{result.coverage:.3f} + correctness {result.correctness:.3f} ({rule} rule)"
            )
            return Score(value=value, answer=response, explanation=explanation, metadata=metadata)
        unparsable = [i if i else "<root>" for i in ids if labels[i] is None]
        return Score(
            value=value,
            answer=response,
            explanation=f"unscored: judge reply unparsable after {retries + 1} attempts for {unparsable}",
            reason="grader_failed",
            metadata=metadata,
        )

    return score
