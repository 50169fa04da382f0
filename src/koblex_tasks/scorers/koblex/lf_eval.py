"""`lf_eval`: the KoBLEX paper's LF-Eval (legal fidelity), a G-Eval style judge score reported on 0-100.

The paper ran DeepEval's GEval with its criteria, five evaluation steps and the parameters input
(background + question), actual output, expected output and context (the gold provisions); DeepEval asks for
an integer 0-10 and the paper reports the mean x10. Here the judge is the model bound to the `grader` role and
answers with the score as its first token (prompt files `koblex/lf_eval.v1.en|ko.txt`).

Score per item = the expected value of the score under the judge's first-token probabilities ("logprobs"
mode): alternatives that are integers 0..10 are kept, those below `min_prob` (joint probability) dropped,
the rest renormalised. A provider that returns no logprobs is sampled `samples` times at temperature 1 and
the parsed integers averaged ("sampled" mode). A reply with no valid score is unscored (`judge_unparsable`),
never 0.

**No grader, no score.** `get_model(role="grader")` silently falls back to the model under test when no
grader is bound, so the scorer checks the role first and returns `Score.unscored(reason="no_grader")`.

The judge's role, temperature, max tokens and cache are set with `JudgeConfig` (`scorers/judge.py`); by
default the logprobs call runs at temperature 0 with 3 tokens and the sampled fallback at temperature 1 with
16 tokens, uncached.

**"10" on digit-splitting tokenizers** (Qwen, Llama-2 ...): there the first token "1" covers both 1 and 10.
- First sampled token "1": P("0" | "1") is read from the next position's top_logprobs (exact), so
  P(10) = P("1")*P0 and P(1) = P("1")*(1-P0). If the reply ended after "1", P0 = 0.
- Otherwise, if any first-position alternative is a multi-digit number (e.g. "10"), the vocabulary has
  multi-digit tokens and "1" is the score 1.
- Otherwise (approximation) the "1" mass goes to whichever endpoint, 1 or 10, is nearer the mean of the other
  valid alternatives (judge distributions are unimodal: a mode near 8 makes "1" almost surely the start of
  "10"); with no other valid alternative it is 1. The rule used is recorded as `ten_rule` in the metadata.
"""

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from inspect_ai.model import ChatMessage, ChatMessageUser, GenerateConfig, Logprob, Model, ModelOutput
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from koblex_tasks.judge_role import GRADER_ROLE
from koblex_tasks.prompts import Prompt, load_prompt
from koblex_tasks.scorers.judge import JudgeConfig, total_usage
from koblex_tasks.scorers.koblex.text import strip_reasoning
from koblex_tasks.scorers.metrics import value_metrics
from koblex_tasks.tasks.koblex.spec import KOBLEX, LF_EVAL

PROMPT_NAME = "koblex/lf_eval"
PROMPT_VERSION = "v1"
MAX_SCORE = 10
# Room for one leading whitespace token plus "1" "0" on digit-splitting tokenizers.
LOGPROBS_MAX_TOKENS = 3
SAMPLED_MAX_TOKENS = 16
SAMPLED_TEMPERATURE = 1.0

TenRule = Literal["none", "observed", "multi_digit_vocab", "nearest_endpoint"]

_TOKEN_MARKERS = ("Ġ", "▁")
_DIGITS = re.compile(r"[0-9]+")
_FIRST_NUMBER = re.compile(r"(?<![0-9])([0-9]{1,2})(?![0-9])")


def clean_token(token: str) -> str:
    """A vocabulary piece as text: BPE/SentencePiece space markers and surrounding whitespace removed."""
    for marker in _TOKEN_MARKERS:
        token = token.replace(marker, "")
    return token.strip()


def _score_of(text: str) -> int | None:
    """The integer 0..10 a (cleaned) token spells exactly, e.g. "8" or "10"; not "08", "11" or "8."."""
    if _DIGITS.fullmatch(text) and str(int(text)) == text and int(text) <= MAX_SCORE:
        return int(text)
    return None


@dataclass(frozen=True)
class ScoreDistribution:
    probs: dict[int, float]  # renormalised over the kept alternatives
    raw: dict[int, float]  # joint probabilities of every valid alternative, before `min_prob`
    dropped: dict[int, float]  # alternatives below `min_prob`
    ten_rule: TenRule
    first_token: str

    @property
    def expected(self) -> float:
        return sum(score * p for score, p in self.probs.items())


def _zero_continuation(position: Logprob) -> float:
    """P("0") at the position after a sampled "1": a "0" glued to it (no space marker) makes "10"."""
    if position.top_logprobs:
        return sum(math.exp(t.logprob) for t in position.top_logprobs if t.token.rstrip() == "0")
    # No alternatives reported: only the sampled token is known (anything else counts as not "0").
    return math.exp(position.logprob) if position.token.rstrip() == "0" else 0.0


def score_distribution(content: list[Logprob], min_prob: float = 0.01) -> ScoreDistribution | None:
    """Distribution over the scores 0..10 from per-token logprobs, or None if no valid score has mass."""
    index = next((i for i, lp in enumerate(content) if clean_token(lp.token)), None)
    if index is None:
        return None
    first = content[index]
    alternatives = {t.token: t.logprob for t in first.top_logprobs or []}
    alternatives.setdefault(first.token, first.logprob)

    raw: dict[int, float] = {}
    one_mass = 0.0
    multi_digit_vocab = False
    for token, logprob in alternatives.items():
        text = clean_token(token)
        if _DIGITS.fullmatch(text) and len(text) > 1:
            multi_digit_vocab = True
        score = _score_of(text)
        if score is None:
            continue
        if text == "1":
            one_mass += math.exp(logprob)
        else:
            raw[score] = raw.get(score, 0.0) + math.exp(logprob)

    rule: TenRule = "none"
    if one_mass > 0:
        if clean_token(first.token) == "1":
            rule = "observed"
            nxt = content[index + 1] if index + 1 < len(content) else None
            p_zero = min(1.0, _zero_continuation(nxt)) if nxt is not None else 0.0
            shares = {1: one_mass * (1.0 - p_zero), 10: one_mass * p_zero}
        elif multi_digit_vocab:
            rule = "multi_digit_vocab"
            shares = {1: one_mass}
        else:
            rule = "nearest_endpoint"
            other = sum(raw.values())
            mean = sum(s * p for s, p in raw.items()) / other if other > 0 else 1.0
            shares = {10 if mean > (1 + MAX_SCORE) / 2 else 1: one_mass}
        for score, p in shares.items():
            if p > 0:
                raw[score] = raw.get(score, 0.0) + p

    kept = {s: p for s, p in raw.items() if p >= min_prob}
    total = sum(kept.values())
    if total <= 0:
        return None
    return ScoreDistribution(
        probs={s: kept[s] / total for s in sorted(kept)},
        raw=dict(sorted(raw.items())),
        dropped={s: p for s, p in sorted(raw.items()) if s not in kept},
        ten_rule=rule,
        first_token=first.token,
    )


def parse_score(text: str) -> int | None:
    """The first stand-alone number of a sampled reply, if it is an integer 0..10."""
    match = _FIRST_NUMBER.search(strip_reasoning(text))
    if match is None:
        return None
    value = int(match.group(1))
    return value if value <= MAX_SCORE else None


def render_prompt(prompt: Prompt, state: TaskState, target: Target) -> str:
    meta = state.metadata or {}
    if "background" in meta and "question" in meta:
        question = f"{meta['background']}\n{meta['question']}"
    else:
        question = state.input_text
    return prompt.render(
        question=question,
        answer=strip_reasoning(state.output.completion or ""),
        expected=target.text,
        provisions="\n".join(meta.get("gold_provisions") or []),
    )


async def _sample_scores(
    judge: Model, judge_config: JudgeConfig, messages: Sequence[ChatMessage], samples: int
) -> list[ModelOutput]:
    """`samples` replies at temperature 1: one `num_choices` request, topped up by single requests when
    the provider ignores `num_choices` (e.g. Anthropic)."""
    config = judge_config.generate_config(temperature=SAMPLED_TEMPERATURE, max_tokens=SAMPLED_MAX_TOKENS)
    batched = config.merge(GenerateConfig(num_choices=samples))
    outputs = [await judge_config.generate(judge, messages, batched)]
    while sum(len(o.choices) for o in outputs) < samples:
        outputs.append(await judge_config.generate(judge, messages, config))
    return outputs


@scorer(metrics=value_metrics(LF_EVAL, KOBLEX.stratum))
def lf_eval(
    language: Literal["en", "ko"] = "en",
    samples: int = 5,
    top_logprobs: int = 20,
    min_prob: float = 0.01,
    model_role: str = GRADER_ROLE,
    temperature: float | None = None,
    max_tokens: int | None = None,
    cache: bool | str = False,
) -> Scorer:
    """LF-Eval: the judge's expected 0-10 legal-fidelity score x10 (0-100); needs a bound judge role.

    Args:
        language: judge prompt language, "en" (the paper's wording) or "ko" (a translation).
        samples: sampled replies per item when the judge's provider returns no logprobs.
        top_logprobs: alternatives requested per token position (most providers allow 0-20).
        min_prob: alternatives with a smaller (joint) probability are dropped before renormalising.
        model_role: the model role of the judge (default "grader").
        temperature: judge temperature (default: 0 for the logprobs call, 1 for sampled replies).
        max_tokens: judge reply length (default: 3 for the logprobs call, 16 for sampled replies).
        cache: cache judge replies with Inspect's cache (True, or an expiry such as "1D"; default off).
    """
    judge_config = JudgeConfig(role=model_role, temperature=temperature, max_tokens=max_tokens, cache=cache)
    if language not in ("en", "ko"):
        raise ValueError(f"language must be 'en' or 'ko', got {language!r}")
    if samples < 1:
        raise ValueError("samples must be at least 1")
    prompt = load_prompt(PROMPT_NAME, f"{PROMPT_VERSION}.{language}")

    async def score(state: TaskState, target: Target) -> Score:
        if not judge_config.bound():
            return Score.unscored(
                reason="no_grader",
                explanation=f"LF-Eval needs a judge: bind one with --model-role {model_role}=<model>",
                metadata={"prompt": prompt.ref},
            )
        judge = judge_config.model()
        messages = [ChatMessageUser(content=render_prompt(prompt, state, target))]
        config = judge_config.generate_config(
            temperature=0.0, max_tokens=LOGPROBS_MAX_TOKENS, logprobs=True, top_logprobs=top_logprobs
        )
        first = await judge_config.generate(judge, messages, config)
        meta: dict[str, Any] = {
            "judge_model": str(judge),
            "prompt": prompt.ref,
            "judge_config": judge_config.describe(),
        }
        choice = first.choices[0] if first.choices else None

        if choice is not None and choice.logprobs is not None and choice.logprobs.content:
            dist = score_distribution(choice.logprobs.content, min_prob)
            meta |= {"mode": "logprobs", "judge_usage": total_usage([first]), "judge_calls": 1}
            if dist is None:
                return Score.unscored(
                    reason="judge_unparsable",
                    answer=first.completion,
                    explanation=f"no score token 0-10 with probability >= {min_prob} in the judge's reply",
                    metadata=meta,
                )
            ev = dist.expected
            meta |= {
                "expected_score": ev,
                "distribution": dist.probs,
                "raw_distribution": dist.raw,
                "dropped": dist.dropped,
                "ten_rule": dist.ten_rule,
                "first_token": dist.first_token,
            }
            shown = ", ".join(f"P({s})={p:.3f}" for s, p in dist.probs.items())
            return Score(
                value={"lf_eval": ev * 10},
                answer=first.completion,
                explanation=f"expected judge score {ev:.3f}/10 from {shown}",
                metadata=meta,
            )

        outputs = await _sample_scores(judge, judge_config, messages, samples)
        replies = [c.message.text for o in outputs for c in o.choices][:samples]
        parsed = [parse_score(r) for r in replies]
        valid = [p for p in parsed if p is not None]
        meta |= {
            "mode": "sampled",
            "judge_usage": total_usage([first, *outputs]),
            "judge_calls": 1 + len(outputs),
            "sampled_scores": parsed,
            "replies": [r[:200] for r in replies],
        }
        if not valid:
            return Score.unscored(
                reason="judge_unparsable",
                answer=replies[0] if replies else "",
                explanation=f"none of the {len(replies)} sampled judge replies holds an integer 0-10",
                metadata=meta,
            )
        ev = sum(valid) / len(valid)
        meta |= {
            "expected_score": ev,
            "distribution": {s: valid.count(s) / len(valid) for s in sorted(set(valid))},
        }
        return Score(
            value={"lf_eval": ev * 10},
            answer=replies[0],
            explanation=f"mean of {len(valid)}/{len(replies)} sampled judge scores: {ev:.3f}/10",
            metadata=meta,
        )

    return score
