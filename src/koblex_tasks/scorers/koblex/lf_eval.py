"""`lf_eval`: the KoBLEX paper's LF-Eval (legal fidelity), DeepEval's G-Eval judge score reported on 0-100.

The paper ran DeepEval's `GEval` with five evaluation steps and the parameters input (background + question),
actual output (the answer, cut to 800 characters), expected output and context (the gold provisions); DeepEval
sends the steps (not the criteria), asks for a JSON object with an integer `score` 0-10 and a `reason`, and
weights the score by the judge's token probabilities. The official pipeline passes no judge model, so the
judge was DeepEval's default (gpt-4o up to DeepEval 3.2.1, gpt-4.1 from 3.2.2; the paper does not say which
version): here the judge is the model bound to the `grader` role, named in every score's `judge_model`.
`prompt="deepeval"` (default) sends DeepEval's prompt (`lf_eval_prompt.py`), `prompt="bare"` the cheaper
prompt answered with the score alone.

Score per item, x10: one greedy call with `top_logprobs`. `weighting="deepeval"` (the paper's, the default
for DeepEval's prompt) is GEval's number case for case (`deepeval_weighting.py`), a judge without logprobs
included (its one reply's raw score); `weighting="koblex"` (the bare prompt's) weights the alternatives at the
token where the score stands (`lf_eval_weights.py`). Either way a reply whose score our strict parse does not
read as an integer 0-10 ("-1", 11, prose, broken JSON) leaves the item unscored (`judge_unparsable`), never 0
and never clipped: that is the failure rate the leaderboard reports. `samples > 1` (not the paper's) replaces a
judge without logprobs by the mean of that many replies at temperature 1 ("sampled" mode).

**Re-derivable.** The metadata keeps the judge record (replies, tokens, the logprobs a weighting reads, mode,
weighting, `min_prob`, scale; `lf_eval_record.py`) with the prompt ref and judge config, and the value is
computed from that record by `derive`; `rederive` recomputes it from a logged score with the spec's rules
(`benchmarks/koblex/spec.py`), refusing a log that declares other ones.

**No grader, no score.** `get_model(role="grader")` silently falls back to the model under test when no
grader is bound, so the scorer checks the role first and returns `Score.unscored(reason="no_grader")`.

Judge settings come from `JudgeConfig` (`scorers/judge.py`). Defaults: temperature 0 for the logprobs call
and 1 for sampled replies; max tokens 1024 for the JSON reply, 3 (logprobs) / 16 (sampled) for "bare";
uncached.
"""

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessage, ChatMessageUser, GenerateConfig, Model, ModelOutput
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from koblex_tasks.benchmarks.koblex.evidence import ProvisionEvidence
from koblex_tasks.benchmarks.koblex.spec import (
    KOBLEX,
    LF_EVAL,
    LF_EVAL_MIN_PROB,
    LF_EVAL_SCALE,
    LF_EVAL_WEIGHTING,
)
from koblex_tasks.data.koblex.dataset import GoldBook
from koblex_tasks.errors import RederivationRefused
from koblex_tasks.judge_role import GRADER_ROLE
from koblex_tasks.scorers.judge import JudgeConfig, total_usage
from koblex_tasks.scorers.koblex.deepeval_weighting import deepeval_weighted_score
from koblex_tasks.scorers.koblex.lf_eval_parse import VARIANTS, Variant, parse_score
from koblex_tasks.scorers.koblex.lf_eval_prompt import Language, judge_prompt, render_prompt
from koblex_tasks.scorers.koblex.lf_eval_record import Rules, Weighting, derive, logprobs_record
from koblex_tasks.scorers.koblex.lf_eval_weights import clean_token, score_distribution
from koblex_tasks.scorers.metrics import value_metrics

__all__ = [
    "RederivationRefused",
    "clean_token",
    "deepeval_weighted_score",
    "lf_eval",
    "parse_score",
    "rederive",
    "score_distribution",
    "spec_rules",
]

# (logprobs call, sampled call) max tokens per variant: a JSON object with a brief reason, or a bare score
# (room for one leading whitespace token plus "1" "0" on digit-splitting tokenizers).
MAX_TOKENS: dict[Variant, tuple[int, int]] = {"deepeval": (1024, 1024), "bare": (3, 16)}
SAMPLED_TEMPERATURE = 1.0
JudgeContext = Literal["gold", "none", "retrieved"]
JUDGE_CONTEXTS: tuple[JudgeContext, ...] = ("gold", "none", "retrieved")


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


def spec_rules(variant: Any) -> Rules:
    """The rules a re-derivation applies to a score of this judge prompt: the spec's, for task version
    1.1.0 (`LF_EVAL_WEIGHTING`, `LF_EVAL_MIN_PROB`, `LF_EVAL_SCALE`)."""
    if variant not in LF_EVAL_WEIGHTING:
        raise RederivationRefused(f"unknown LF-Eval judge prompt {variant!r}")
    return Rules(cast(Weighting, LF_EVAL_WEIGHTING[variant]), LF_EVAL_MIN_PROB, LF_EVAL_SCALE)


def _declared_rules_agree(rules: Rules, sources: Mapping[str, Mapping[str, Any]]) -> None:
    """Raise when the log (scorer arguments or score record) declares a rule other than the spec's; a NaN
    `min_prob` equals nothing, so it is refused too. None (a scorer argument left to its default) declares
    nothing."""
    expected = {"min_prob": rules.min_prob, "scale": rules.scale, "weighting": rules.weighting}
    for where, source in sources.items():
        for key, value in expected.items():
            if source.get(key) is not None and not (source[key] == value and not _is_nan(source[key])):
                raise RederivationRefused(
                    f"LF-Eval {key}={source[key]!r} in the {where}; the spec's rule is {value!r}"
                )
    if sources["score record"].get("mode") == "sampled":
        raise RederivationRefused("sampled judge replies (samples > 1) are not the paper's protocol")


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def rederive(sample: EvalSample, score: Score, params: Mapping[str, Any]) -> dict[str, float | None]:
    """`{"lf_eval": value or None}` recomputed from `score.metadata` by the scorer's own `derive`, with the
    rules of the spec (`spec_rules`), never the log's.

    `params` are the scorer's logged arguments (the leaderboard passes them). A log whose scorer arguments or
    score record declare another `min_prob`, scale or weighting, or a recorded protocol that contradicts
    `params` (`prompt` — `judge_prompt` as a task argument — or `official`, when given), raises
    `RederivationRefused` (`koblex_tasks.errors`), which the leaderboard reports with its message. A score
    without a judge record (no grader, a log from before the record existed, or a malformed record) re-derives
    to None.
    `sample` is not needed: the record holds it all.
    """
    meta = score.metadata or {}
    variant = params.get("prompt", params.get("judge_prompt"))
    if variant is not None and variant != meta.get("prompt_variant"):
        raise RederivationRefused(
            f"the score was judged with prompt {meta.get('prompt_variant')!r}, the run declares {variant!r}"
        )
    if "official" in params and bool(params["official"]) != bool(meta.get("official")):
        raise RederivationRefused(f"the score's official={meta.get('official')!r} contradicts the run's")
    if "mode" not in meta:
        return {"lf_eval": None}  # no judge record
    rules = spec_rules(meta.get("prompt_variant"))
    _declared_rules_agree(rules, {"scorer arguments": params, "score record": meta})
    try:
        return {"lf_eval": derive(meta, rules).value}
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return {"lf_eval": None}


@scorer(metrics=value_metrics(LF_EVAL, KOBLEX.stratum))
def lf_eval(
    language: Language = "en",
    samples: int = 1,
    top_logprobs: int = 20,
    min_prob: float = LF_EVAL_MIN_PROB,
    model_role: str = GRADER_ROLE,
    temperature: float | None = None,
    max_tokens: int | None = None,
    cache: bool | str = False,
    prompt: Variant = "deepeval",
    official: bool = False,
    weighting: Weighting | None = None,
    gold: GoldBook | None = None,
    judge_context: JudgeContext = "gold",
    judge_reference: bool = True,
) -> Scorer:
    """LF-Eval: the judge's expected 0-10 legal-fidelity score x10 (0-100); needs a bound judge role.

    Args:
        language: judge prompt language, "en" (the paper's wording) or "ko" (a translation).
        samples: 1 (the paper's): a judge without logprobs is scored by its one reply; more: the mean of that
            many replies at temperature 1 (not the paper's protocol; the leaderboard refuses it).
        top_logprobs: alternatives requested per token position (DeepEval's 20; most providers allow 0-20).
        min_prob: the "koblex" weighting's cut on alternatives (DeepEval's 1% is fixed; another value is not
            the paper's protocol and the leaderboard refuses it).
        model_role: the model role of the judge (default "grader").
        temperature: judge temperature (default: 0 for the logprobs call, 1 for sampled replies).
        max_tokens: judge reply length (default: 1024 for "deepeval"; 3 logprobs / 16 sampled for "bare").
        cache: cache judge replies with Inspect's cache (True, or an expiry such as "1D"; default off).
        prompt: "deepeval" (the paper's DeepEval GEval prompt, JSON reply) or "bare" (score-only reply).
        official: judge the raw answer cut to its first 800 characters, as the paper's script did.
        weighting: "deepeval" (DeepEval's own, case for case) or "koblex" (the alternatives at the score's
            place); default the spec's for the prompt ("deepeval" for DeepEval's prompt, "koblex" for "bare").
        gold: each item's gold provisions, by sample id (the task's `GoldBook`: the judge's Context, never seen
            by a solver); None: the sample's metadata (old logs).
        judge_context: the provisions the judge reads as Context: "gold" (the paper's), "none" (an empty
            list: does LF-Eval reward copying retrieved gold provisions?) or "retrieved" (the provisions the
            method used, its evidence's `predicted`). Not the paper's protocol unless "gold".
        judge_reference: show the judge the reference answer as expected output (the paper's); False: empty.
    """
    if judge_context not in JUDGE_CONTEXTS:
        raise ValueError(f"judge_context must be one of {list(JUDGE_CONTEXTS)}, got {judge_context!r}")
    judge_config = JudgeConfig(role=model_role, temperature=temperature, max_tokens=max_tokens, cache=cache)
    if samples < 1:
        raise ValueError("samples must be at least 1")
    if not 0 <= min_prob < 1:
        raise ValueError(f"min_prob must be in [0, 1), got {min_prob}")
    if prompt not in VARIANTS:
        raise ValueError(f"LF-Eval prompt must be one of {', '.join(VARIANTS)}, got {prompt!r}")
    chosen = cast(Weighting, weighting or LF_EVAL_WEIGHTING[prompt])
    if chosen not in ("deepeval", "koblex"):
        raise ValueError(f"weighting must be 'deepeval' or 'koblex', got {chosen!r}")
    if chosen == "deepeval" and prompt != "deepeval":
        raise ValueError("weighting='deepeval' reads DeepEval's JSON reply: use it with prompt='deepeval'")
    if chosen == "deepeval" and min_prob != LF_EVAL_MIN_PROB:
        raise ValueError(
            f"DeepEval's weighting cuts alternatives at {LF_EVAL_MIN_PROB}: min_prob is 'koblex's"
        )
    rules = Rules(chosen, min_prob, LF_EVAL_SCALE)
    template = judge_prompt(prompt, language)
    logprobs_tokens, sampled_tokens = MAX_TOKENS[prompt]
    protocol = {
        "prompt": template.ref,
        "prompt_variant": prompt,
        "official": official,
        "weighting": chosen,
        "min_prob": min_prob,
        "scale": LF_EVAL_SCALE,
        "judge_context": judge_context,
        "judge_reference": judge_reference,
    }

    async def score(state: TaskState, target: Target) -> Score:
        if not judge_config.bound():
            return Score.unscored(
                reason="no_grader",
                explanation=f"LF-Eval needs a judge: bind one with --model-role {model_role}=<model>",
                metadata=protocol,
            )
        entry = gold.get(state.sample_id) if isinstance(gold, GoldBook) else None
        context = (
            list(entry.provisions) if entry is not None else (state.metadata or {}).get("gold_provisions")
        )
        if context is None:
            return Score.unscored(
                reason="no_context",
                explanation="LF-Eval needs the gold provisions (the task's gold book)",
                metadata=protocol,
            )
        judge = judge_config.model()
        if judge_context == "none":
            context = []
        elif judge_context == "retrieved":
            context = list(store_as(ProvisionEvidence).predicted)
        rendered = render_prompt(prompt, template, state, target, official, context, judge_reference)
        messages = [ChatMessageUser(content=rendered)]
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
        outputs = [first]
        if choice is not None and choice.logprobs is not None and choice.logprobs.content:
            reply = choice.message.text
            meta |= {"mode": "logprobs", "replies": [reply]}
            meta |= logprobs_record(prompt, choice.logprobs.content, reply)
        elif samples == 1:  # DeepEval's judge without logprobs: the one reply's raw score
            meta |= {"mode": "raw", "replies": [choice.message.text if choice is not None else ""]}
        else:
            outputs += await _sample_replies(judge, judge_config, messages, samples, sampled_tokens)
            replies = [c.message.text for o in outputs[1:] for c in o.choices][:samples]
            meta |= {"mode": "sampled", "replies": replies}
        meta |= {"judge_usage": total_usage(outputs), "judge_calls": len(outputs)}
        derived = derive(meta, rules)
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
