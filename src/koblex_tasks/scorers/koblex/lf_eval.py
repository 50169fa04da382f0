"""`lf_eval`: the KoBLEX paper's LF-Eval (legal fidelity), DeepEval's G-Eval judge score reported on 0-100.

The paper ran DeepEval's `GEval` (3.2.x, default judge gpt-4o) with five evaluation steps and the parameters
input (background + question), actual output (the answer, cut to 800 characters), expected output and
context (the gold provisions); DeepEval sends the steps (not the criteria), asks for a JSON object with an
integer `score` 0-10 and a `reason`, and weights the score by the judge's token probabilities. Here the judge
is the model bound to the `grader` role; `prompt="deepeval"` (default) sends DeepEval's prompt
(`lf_eval_prompt.py`), `prompt="bare"` the cheaper prompt answered with the score alone.

Score per item, x10 ("logprobs" mode): one greedy call with `top_logprobs`; the score is found INSIDE the
reply (the JSON `score` value, or for "bare" the number where the prompt asks for it) and weighted by the
alternatives at its token (`lf_eval_weights.py`: DeepEval's weighted summed score, plus the "10" split on
digit-splitting tokenizers). A provider that returns no logprobs is sampled `samples` times at temperature 1
and the valid scores averaged ("sampled" mode). A score that is not an integer 0-10 ("-1", 11, prose, broken
JSON) leaves the item unscored (`judge_unparsable`), never 0 and never clipped.

**Re-derivable.** The metadata keeps the judge record (replies, reply tokens, the logprobs at the score
token, mode, variant, `min_prob`; `lf_eval_record.py`) with the prompt ref and judge config, and the value is
computed from that record by `derive`; `rederive` recomputes it from a logged score.

**No grader, no score.** `get_model(role="grader")` silently falls back to the model under test when no
grader is bound, so the scorer checks the role first and returns `Score.unscored(reason="no_grader")`.

Judge settings come from `JudgeConfig` (`scorers/judge.py`). Defaults: temperature 0 for the logprobs call
and 1 for sampled replies; max tokens 1024 for the JSON reply, 3 (logprobs) / 16 (sampled) for "bare";
uncached.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessage, ChatMessageUser, GenerateConfig, Model, ModelOutput
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from koblex_tasks.benchmarks.koblex.spec import KOBLEX, LF_EVAL
from koblex_tasks.judge_role import GRADER_ROLE
from koblex_tasks.scorers.judge import JudgeConfig, total_usage
from koblex_tasks.scorers.koblex.lf_eval_parse import Variant, parse_score
from koblex_tasks.scorers.koblex.lf_eval_prompt import Language, judge_prompt, render_prompt
from koblex_tasks.scorers.koblex.lf_eval_record import derive, logprobs_record
from koblex_tasks.scorers.koblex.lf_eval_weights import clean_token, score_distribution
from koblex_tasks.scorers.metrics import value_metrics

__all__ = ["clean_token", "lf_eval", "parse_score", "rederive", "score_distribution"]

# (logprobs call, sampled call) max tokens per variant: a JSON object with a brief reason, or a bare score
# (room for one leading whitespace token plus "1" "0" on digit-splitting tokenizers).
MAX_TOKENS: dict[Variant, tuple[int, int]] = {"deepeval": (1024, 1024), "bare": (3, 16)}
SAMPLED_TEMPERATURE = 1.0


async def _sample_replies(
    judge: Model, judge_config: JudgeConfig, messages: Sequence[ChatMessage], samples: int, max_tokens: int
) -> list[ModelOutput]:
    """`samples` replies at temperature 1: one `num_choices` request, topped up by single requests when
    the provider ignores `num_choices` (e.g. Anthropic)."""
    config = judge_config.generate_config(temperature=SAMPLED_TEMPERATURE, max_tokens=max_tokens)
    batched = config.merge(GenerateConfig(num_choices=samples))
    outputs = [await judge_config.generate(judge, messages, batched)]
    while sum(len(o.choices) for o in outputs) < samples:
        outputs.append(await judge_config.generate(judge, messages, config))
    return outputs


def rederive(sample: EvalSample, score: Score, params: Mapping[str, Any]) -> dict[str, float | None]:
    """`{"lf_eval": value or None}` recomputed from `score.metadata` alone, by the scorer's own `derive`.

    `params` are the scorer's logged arguments (the leaderboard passes them): a recorded protocol that
    contradicts them (`prompt` — `judge_prompt` as a task argument — or `official`, when given) re-derives to
    None, as does a score without a judge record (no grader, a log from before the record existed, or a
    malformed record). `sample` is not needed: the record holds it all.
    """
    meta = score.metadata or {}
    variant = params.get("prompt", params.get("judge_prompt"))
    if variant is not None and variant != meta.get("prompt_variant"):
        return {"lf_eval": None}
    if "official" in params and bool(params["official"]) != bool(meta.get("official")):
        return {"lf_eval": None}
    try:
        return {"lf_eval": derive(meta).value}
    except (KeyError, TypeError, ValueError, AttributeError):
        return {"lf_eval": None}


@scorer(metrics=value_metrics(LF_EVAL, KOBLEX.stratum))
def lf_eval(
    language: Language = "en",
    samples: int = 5,
    top_logprobs: int = 20,
    min_prob: float = 0.01,
    model_role: str = GRADER_ROLE,
    temperature: float | None = None,
    max_tokens: int | None = None,
    cache: bool | str = False,
    prompt: Variant = "deepeval",
    official: bool = False,
) -> Scorer:
    """LF-Eval: the judge's expected 0-10 legal-fidelity score x10 (0-100); needs a bound judge role.

    Args:
        language: judge prompt language, "en" (the paper's wording) or "ko" (a translation).
        samples: sampled replies per item when the judge's provider returns no logprobs.
        top_logprobs: alternatives requested per token position (DeepEval's 20; most providers allow 0-20).
        min_prob: alternatives with a smaller (joint) probability are dropped before renormalising.
        model_role: the model role of the judge (default "grader").
        temperature: judge temperature (default: 0 for the logprobs call, 1 for sampled replies).
        max_tokens: judge reply length (default: 1024 for "deepeval"; 3 logprobs / 16 sampled for "bare").
        cache: cache judge replies with Inspect's cache (True, or an expiry such as "1D"; default off).
        prompt: "deepeval" (the paper's DeepEval GEval prompt, JSON reply) or "bare" (score-only reply).
        official: judge the raw answer cut to its first 800 characters, as the paper's script did.
    """
    judge_config = JudgeConfig(role=model_role, temperature=temperature, max_tokens=max_tokens, cache=cache)
    if samples < 1:
        raise ValueError("samples must be at least 1")
    if not 0 <= min_prob < 1:
        raise ValueError(f"min_prob must be in [0, 1), got {min_prob}")
    template = judge_prompt(prompt, language)
    logprobs_tokens, sampled_tokens = MAX_TOKENS[prompt]
    protocol = {"prompt": template.ref, "prompt_variant": prompt, "official": official, "min_prob": min_prob}

    async def score(state: TaskState, target: Target) -> Score:
        if not judge_config.bound():
            return Score.unscored(
                reason="no_grader",
                explanation=f"LF-Eval needs a judge: bind one with --model-role {model_role}=<model>",
                metadata=protocol,
            )
        if "gold_provisions" not in (state.metadata or {}):
            return Score.unscored(
                reason="no_context",
                explanation="LF-Eval needs the gold provisions (sample metadata 'gold_provisions')",
                metadata=protocol,
            )
        judge = judge_config.model()
        messages = [ChatMessageUser(content=render_prompt(prompt, template, state, target, official))]
        config = judge_config.generate_config(
            temperature=0.0, max_tokens=logprobs_tokens, logprobs=True, top_logprobs=top_logprobs
        )
        first = await judge_config.generate(judge, messages, config)
        meta: dict[str, Any] = {
            "judge_model": str(judge),
            **protocol,
            "judge_config": judge_config.describe(),
        }
        choice = first.choices[0] if first.choices else None
        if choice is not None and choice.logprobs is not None and choice.logprobs.content:
            outputs = [first]
            meta |= {"mode": "logprobs", "replies": [choice.message.text]}
            meta |= logprobs_record(prompt, choice.logprobs.content)
        else:
            outputs = [first, *await _sample_replies(judge, judge_config, messages, samples, sampled_tokens)]
            replies = [c.message.text for o in outputs[1:] for c in o.choices][:samples]
            meta |= {"mode": "sampled", "replies": replies}
        meta |= {"judge_usage": total_usage(outputs), "judge_calls": len(outputs)}
        derived = derive(meta)
        meta |= derived.details
        answer = meta["replies"][0] if meta["replies"] else ""
        if derived.value is None:
            return Score.unscored(
                reason="judge_unparsable", answer=answer, explanation=derived.explanation, metadata=meta
            )
        return Score(
            value={"lf_eval": derived.value}, answer=answer, explanation=derived.explanation, metadata=meta
        )

    return score
