"""`legit_likert`: the Likert judge the LEGIT paper compares its rubric with (one 0-10 score per answer).

The official script (`reasoning_task_evaluate_likert.py` at c79355a of jinulee-v/LEGIT) sends the prompt
`evaluate_likert_scale` with the court's full judgment and the answer, empty system prompt, and reads a JSON
`{"rationales": str, "score": int}`; its released `*_likertevaluator_*` files hold integer scores 0-10.
`prompts/legit/likert.v1.txt` is our own prompt for that call (same inputs, same reply schema, same 0-10 scale).

Deviations, on purpose (docs/deviations.md, the LEGIT table):
* the official prompt file is not in the released snapshot, so the wording of `likert.v1` is ours;
* the judgment: the official script reads the full court judgment (`precedent` of `data/legit.jsonl`, not in
  the test records); we show the court's final order and its issue tree (each issue's summary, claims, cited
  laws, reasoning and conclusion), which is the same judgment in the record's own structure;
* a reply that does not parse, or a score that is not an integer in 0-10, is retried up to `retries` more
  times and then left *unscored* (the official script writes 0 on an exception, then drops the row).

Recorded like the rubric judge: judge model, judge config, the prompt's hash, every raw reply; `rederive`
recomputes the value from the recorded score alone.
"""

from collections.abc import Mapping
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from koblex_tasks.benchmarks.legit.issues import Issue, issues_from_metadata
from koblex_tasks.benchmarks.legit.spec import LEGIT, LEGIT_LIKERT, LIKERT_MAX, LIKERT_MIN
from koblex_tasks.judge_role import GRADER_ROLE
from koblex_tasks.prompts import load_prompt
from koblex_tasks.scorers.judge import JudgeConfig, total_usage
from koblex_tasks.scorers.legit.judging import attempts_record, judge_until_parsed, reply_objects
from koblex_tasks.scorers.metrics import value_metrics

__all__ = [
    "LIKERT_PROMPT",
    "judgment_text",
    "legit_likert",
    "likert_prompt_text",
    "parse_likert_reply",
    "rederive",
]

LIKERT_PROMPT = "legit/likert"
DEFAULT_TEMPERATURE = 0.0


def judgment_text(answer: str, issues: list[Issue]) -> str:
    """The court's judgment as the record holds it: the final order, then each issue of the tree."""
    parts = [f"[주문]\n{answer}"]
    for issue in issues:
        if issue.is_root:
            continue
        lines = [f"[쟁점 {issue.id}] {issue.summary}"]
        lines += [f"- 주장 ({c.claimer}): {c.content}" for c in issue.claims]
        lines += [f"- 관련 법령/판례: {law}" for law in issue.relevant_law]
        lines += [f"- 판단: {text}" for text in issue.analysis]
        lines.append(f"- 결론: {issue.conclusion}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def likert_prompt_text(response: str, judgment: str, version: str = "v1") -> str:
    return load_prompt(LIKERT_PROMPT, version).render(judgment=judgment, response=response)


def parse_likert_reply(text: str) -> int | None:
    """The score in a reply: a JSON integer 0-10 under `score`; anything else (7.5, "7", 11, true) is None."""
    for obj in reply_objects(text):
        value = obj.get("score")
        if isinstance(value, int) and not isinstance(value, bool) and LIKERT_MIN <= value <= LIKERT_MAX:
            return value
    return None


def _value(score: int | None) -> dict[str, float]:
    return {
        "likert_score": float("nan") if score is None else float(score),
        "likert_failure_rate": 1.0 if score is None else 0.0,
    }


@scorer(metrics=value_metrics(LEGIT_LIKERT, LEGIT.stratum, extra={"likert_failure_rate": [mean()]}))
def legit_likert(
    retries: int = 2,
    prompt_version: str = "v1",
    model_role: str = GRADER_ROLE,
    temperature: float | None = None,
    max_tokens: int | None = None,
    cache: bool | str = False,
) -> Scorer:
    """The paper's Likert judge: one 0-10 score for the whole answer against the court's judgment.

    Args:
        retries: extra judge calls while the reply is unparsable or out of the scale.
        prompt_version: version of `prompts/legit/likert`.
        model_role: the judge's model role (default "grader"; never the model under test).
        temperature: judge temperature (default 0).
        max_tokens: judge reply length (default: the provider's).
        cache: cache judge replies with Inspect's cache (True, or an expiry such as "1D").
    """
    if retries < 0:
        raise ValueError("retries must be >= 0")
    judge_config = JudgeConfig(
        role=model_role,
        temperature=DEFAULT_TEMPERATURE if temperature is None else temperature,
        max_tokens=max_tokens,
        cache=cache,
    )
    prompt_ref = load_prompt(LIKERT_PROMPT, prompt_version).ref

    async def score(state: TaskState, target: Target) -> Score:
        meta: dict[str, Any] = {
            "doc_id": state.metadata.get("doc_id", state.sample_id),
            "difficulty": state.metadata.get("difficulty"),
            "scale": [LIKERT_MIN, LIKERT_MAX],
            "judge_prompt": prompt_ref,
            "judge_config": {**judge_config.describe(), "retries": retries},
            # what stands in for the official script's full judgment text
            "judgment_source": "record: final order + issue tree",
        }
        if not judge_config.bound():
            return Score(
                value=_value(None),
                explanation="no judge bound to the grader role",
                reason="no_grader",
                metadata={**meta, "likert": None},
            )
        judge = judge_config.model()
        response = state.output.completion
        judgment = judgment_text(target.text, issues_from_metadata(state.metadata))
        prompt = likert_prompt_text(response, judgment, prompt_version)
        result = await judge_until_parsed(judge, prompt, retries, judge_config, parse_likert_reply)
        meta.update(
            judge_model=str(judge),
            likert=result.value,
            **attempts_record(result.replies, result.errors),
            judge_usage=total_usage([result.usage]),
        )
        if result.value is None:
            why = f"Likert reply unparsable or outside {LIKERT_MIN}-{LIKERT_MAX} after {retries + 1} attempts"
            return Score(
                value=_value(None), answer=response, explanation=f"unscored: {why}", reason="grader_failed",
                metadata=meta,
            )  # fmt: skip
        return Score(
            value=_value(result.value),
            answer=response,
            explanation=f"Likert {result.value}/10",
            metadata=meta,
        )

    return score


def rederive(sample: EvalSample, score: Score, params: Mapping[str, Any]) -> dict[str, float | None]:
    """The value recomputed from the recorded score (`likert`), re-parsed from the raw reply so a stored
    number that the reply does not say is refused (None in every component)."""
    meta = score.metadata or {}
    recorded, raw = meta.get("likert"), meta.get("raw")
    parsed = parse_likert_reply(raw) if isinstance(raw, str) else None
    if parsed != recorded:
        return dict.fromkeys(LEGIT_LIKERT.keys)
    value = _value(parsed)
    return {k: None if k == "likert_score" and parsed is None else v for k, v in value.items()}
