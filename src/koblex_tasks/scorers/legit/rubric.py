"""The LEGIT issue-tree rubric scorer: a verdict per issue node (from a judge, or replayed), then the 5/2/3 score.

The arithmetic and its rules are in `arithmetic.py` (`rule="paper"` / `"official"`, `official_script=True`
for the released scripts' arithmetic exactly); asking the judge is `judging.py`; released verdicts in place
of a judge are `verdicts.py`. This module is the scorer and `rederive`, which recomputes a logged score from
the labels recorded beside it with the same `rubric_score`.

Deviations from the official scripts, on purpose (by default; `official_script=True` restores them): the
scripts drop an issue whose judge call or JSON parse fails and then divide by `len(judged issues) - 1`, so a
failure silently changes N (and raises every other issue's weight). Here an unparsable reply is retried up to
`retries` more times; if it is still unparsable the issue is *unscored*, and so is the sample's total (NaN in
every score component), while `judge_failure_rate` stays a number.

Every score's metadata records the rule, the judge (`judge_model`, `judge_config` with the effective
temperature, max tokens, cache, role and retries, the prompt's hash) and each node's labels and points, so
`rederive` and the judge audit can be run on the log alone.
"""

import math
from collections.abc import Mapping
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from koblex_tasks.benchmarks.legit.issues import Issue, issues_from_metadata
from koblex_tasks.benchmarks.legit.spec import LEGIT, LEGIT_RUBRIC, REPLAYED_KEY
from koblex_tasks.judge_role import GRADER_ROLE
from koblex_tasks.prompts import load_prompt
from koblex_tasks.scorers.judge import JudgeConfig, total_usage
from koblex_tasks.scorers.legit.arithmetic import (
    RULES,
    RubricResult,
    Verdict,
    check_rule,
    rubric_score,
    unscored,
)
from koblex_tasks.scorers.legit.judging import (
    JUDGE_PROMPT,
    judge_prompt_text,
    judge_tree,
    parse_judge_reply,
)
from koblex_tasks.scorers.legit.metrics import pooled
from koblex_tasks.scorers.legit.verdicts import issue_metadata, read_row, stored_check
from koblex_tasks.scorers.metrics import value_metrics

__all__ = [
    "DEFAULT_JUDGE_TEMPERATURE",
    "REPLAYED_MODE",
    "RULES",
    "RubricResult",
    "Verdict",
    "judge_prompt_text",
    "legit_rubric",
    "parse_judge_reply",
    "rederive",
    "rescore",
    "rubric_score",
    "score_value",
    "sent_temperature",
]

# A judge grades: deterministic by default (the provider's own default is often 1.0).
DEFAULT_JUDGE_TEMPERATURE = 0.0


def sent_temperature(temperature: float | None, official_script: bool) -> float | None:
    """The judge's temperature: the one asked for, else 0, or under the official scripts none at all (they
    send no temperature, so the provider's default applies)."""
    if temperature is not None:
        return temperature
    return None if official_script else DEFAULT_JUDGE_TEMPERATURE


REPLAYED_MODE = "replayed verdicts"  # score metadata `mode` of a sample graded by released verdicts


def score_value(result: RubricResult, failures: int, n_issues: int) -> dict[str, float]:
    return {
        "legit_score": result.legit_score,
        "final_order": result.final_order,
        "coverage": result.coverage,
        "correctness": result.correctness,
        "judge_failure_rate": failures / n_issues if n_issues else 0.0,
    }


def _explanation(result: RubricResult, rule: str, official_script: bool) -> str:
    how = f"{rule} rule" + (", official script arithmetic" if official_script else "")
    return (
        f"{result.legit_score:.3f}/10 = final order {result.final_order:g} + coverage "
        f"{result.coverage:.3f} + correctness {result.correctness:.3f} ({how})"
    )


def _replayed_row(state: TaskState) -> dict[str, Any] | None:
    row = state.metadata.get(REPLAYED_KEY)
    return row if isinstance(row, dict) else None


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
    official_script: bool = False,
    replayed_verdicts: bool = False,
) -> Scorer:
    """LEGIT issue-tree rubric with a judge bound to `model_role` (required: never the model under test).

    Args:
        rule: "paper" (5/2/3 formula) or "official" (also zero nodes with a covered-but-wrong descendant).
        retries: extra judge calls per node while its reply is unparsable.
        prompt_version: version of `prompts/legit/judge`.
        concurrency: judge calls in flight per sample.
        model_role: the model role of the judge (default "grader").
        temperature: judge temperature (default 0; with `official_script` none is sent, as the released
            scripts send none: the provider's default).
        max_tokens: judge reply length (default: the provider's).
        cache: cache judge replies with Inspect's cache (True, or an expiry such as "1D"; default off).
        official_script: the released scripts' arithmetic exactly (prefix descendancy, unjudged issues
            dropped and N shrunk); see `scorers/legit/arithmetic.py`.
        replayed_verdicts: grade with the released verdicts the `legit_verdicts` solver put in the sample
            (no judge is called); without it, a sample carrying such verdicts is refused.
    """
    check_rule(rule)
    if retries < 0:
        raise ValueError("retries must be >= 0")
    judge_config = JudgeConfig(
        role=model_role,
        temperature=sent_temperature(temperature, official_script),
        max_tokens=max_tokens,
        cache=cache,
    )
    prompt_ref = load_prompt(JUDGE_PROMPT, prompt_version).ref
    common = {"rule": rule, "official_script": official_script, "retries": retries}

    def metadata(state: TaskState, judge_model: str, issues: dict[str, Any]) -> dict[str, Any]:
        return {
            "doc_id": state.metadata.get("doc_id", state.sample_id),
            "difficulty": state.metadata.get("difficulty"),
            **common,
            "judge_model": judge_model,
            "judge_prompt": prompt_ref,
            "judge_config": {**judge_config.describe(), "retries": retries, "concurrency": concurrency},
            "n_issues": len(issues),
            "n_unparsable": sum(1 for v in issues.values() if v["contains_issue"] is None),
            "issues": issues,
        }

    def finish(state: TaskState, result: RubricResult, meta: dict[str, Any], why: str, reason: str) -> Score:
        """The Score: the rubric's value, and for an unscored total the reason and why."""
        value = score_value(result, meta["n_unparsable"], meta["n_issues"])
        response = state.output.completion
        if result.scored:
            explanation = _explanation(result, rule, official_script)
            return Score(value=value, answer=response, explanation=explanation, metadata=meta)
        return Score(
            value=value, answer=response, explanation=f"unscored: {why}", reason=reason, metadata=meta
        )

    async def judged(state: TaskState, issues: list[Issue]) -> Score:
        judge = judge_config.model()
        response = state.output.completion
        judgements = await judge_tree(
            judge, response, issues, retries, judge_config, prompt_version, concurrency
        )
        ids = [i.id for i in issues]
        labels = {i: judgements[i].verdict for i in ids}
        result = rubric_score(ids, labels, rule, official_script)
        meta = metadata(state, str(judge), {i: judgements[i].metadata(result.issue_scores[i]) for i in ids})
        meta["judge_usage"] = total_usage(j.usage for j in judgements.values())
        unparsable = [i if i else "<root>" for i in ids if labels[i] is None]
        why = f"judge reply unparsable after {retries + 1} attempts for {unparsable}"
        return finish(state, result, meta, why, "grader_failed")

    def replayed(state: TaskState, issues: list[Issue], released: dict[str, Any]) -> Score:
        ids = [i.id for i in issues]
        row = read_row(ids, released["evaluation_result"])
        result = (
            unscored(dict.fromkeys(ids), len(ids) - 1)
            if row.extra
            else rubric_score(ids, row.labels, rule, official_script)
        )
        meta = metadata(
            state,
            f"replay/{released['evaluator_model']}",
            {i: issue_metadata(row, i, result.issue_scores[i]) for i in row.labels},
        )
        meta["mode"] = REPLAYED_MODE
        # no judge was called: its sampling settings do not apply
        meta["judge_config"] = {"role": model_role, "mode": REPLAYED_MODE, "retries": None}
        meta["retries"] = None
        meta[REPLAYED_KEY] = {
            "file": released.get("file"),
            "line": released.get("line"),
            "evaluator_model": released["evaluator_model"],
            "missing": row.missing,
            "invalid": row.invalid,
            "extra": row.extra,
            "stored_check": stored_check(ids, row, float(released["score"])),
        }
        return finish(
            state, result, meta, str(row.problem), "scoring_failed" if row.extra else "grader_failed"
        )

    async def score(state: TaskState, target: Target) -> Score:
        issues = issues_from_metadata(state.metadata)
        released = _replayed_row(state)
        if replayed_verdicts and released is None:
            raise ValueError(
                f"sample {state.sample_id!r} carries no released verdicts: use the legit_verdicts solver"
            )
        if released is not None and not replayed_verdicts:
            raise ValueError(
                f"sample {state.sample_id!r} carries released verdicts but the task calls a judge: build it "
                "with -T verdicts=FILE (or `koblex replay --verdicts FILE`)"
            )
        if released is not None:
            return replayed(state, issues, released)
        return await judged(state, issues)

    return score


# ----------------------------------------------------------------------------------------------------------
# Re-deriving a logged score


def label_from_record(record: Any) -> Verdict | None:
    """A node's verdict from its logged record (both flags booleans, or both null = no verdict)."""
    if not isinstance(record, Mapping):
        raise ValueError(f"an issue record must be an object, got {type(record).__name__}")
    contains, correct = record.get("contains_issue"), record.get("correct_conclusion")
    if isinstance(contains, bool) and isinstance(correct, bool):
        return Verdict(contains, correct)
    if contains is None and correct is None:
        return None
    raise ValueError(f"labels must be booleans or both null, got {contains!r}, {correct!r}")


def rescore(sample: EvalSample, score: Score, rule: str, official_script: bool) -> dict[str, float | None]:
    """The rubric value under `rule` from the per-issue labels a logged score records (unscored -> None).

    The tree (its issue ids, in order) comes from the sample's metadata, the labels from
    `score.metadata["issues"]` in their recorded order. Raises ValueError/KeyError on malformed metadata.
    """
    meta = score.metadata or {}
    tree_meta = (sample.metadata or {}).get("issues")
    issues = meta.get("issues")
    if not isinstance(tree_meta, list) or not isinstance(issues, Mapping):
        raise ValueError(
            f"sample {sample.id!r}: no issue tree in the sample metadata or no labels in the score"
        )
    tree = [str(node["id"]) for node in tree_meta]
    labels = {str(i): label_from_record(record) for i, record in issues.items()}
    replay = meta.get(REPLAYED_KEY)
    if isinstance(replay, Mapping) and replay.get("extra"):  # a released row with ids outside the tree
        result = unscored(dict.fromkeys(tree), len(tree) - 1)  # is never scored
    else:
        result = rubric_score(tree, labels, rule, official_script)
    failures = sum(1 for i in tree if labels.get(i) is None)
    value = score_value(result, failures, len(tree))
    return {k: None if math.isnan(v) else v for k, v in value.items()}


def rederive(sample: EvalSample, score: Score, params: Mapping[str, Any]) -> dict[str, float | None]:
    """The rubric value of `score` recomputed from the per-issue labels in `score.metadata["issues"]`.

    `params` are the run's scoring parameters (the task's `rule` and `official_script`, e.g. from the log's
    task metadata); a key absent there is read from the score's own metadata. Pure, with the scorer's own
    `rubric_score`: the leaderboard compares the result with the stored `score.value` to refuse tampered
    scores. A score whose recorded protocol contradicts `params`, or whose metadata is malformed,
    re-derives to None in every component (so a stored number is refused).
    """
    meta = score.metadata or {}
    unscored: dict[str, float | None] = dict.fromkeys(LEGIT_RUBRIC.keys)
    protocol = {}
    for key, default in (("rule", "paper"), ("official_script", False)):
        recorded = meta.get(key, default)
        if key in params and params[key] != recorded:
            return unscored
        protocol[key] = params.get(key, recorded)
    try:
        return rescore(sample, score, str(protocol["rule"]), bool(protocol["official_script"]))
    except (KeyError, TypeError, ValueError, AttributeError):
        return unscored
