"""The LEGIT rubric as a reward: the paper trains with the LEGIT score as its GRPO reward.

`make_legit_reward(judge=...)` returns a plain function `reward(completions, issues, **record_fields) ->
list[float]`, the shape TRL's `GRPOTrainer(reward_funcs=[...])` calls (`prompts`, `completions` and every
dataset column as keyword lists) and a verl batch reward function can wrap. Each completion is scored with the
scorer's own code: `judge_tree` asks the judge about every node with the rubric prompt, `rubric_score` turns the
verdicts into the 0-10 score, so a reward equals the `legit_rubric` score of the same answer and verdicts,
except that a value missing a bound (0 or the component's maximum) by float rounding is the bound itself.

The judge is any Inspect model (`"openai/gpt-4.1"`, `"vllm/google/gemma-3-27b-it"`, a `Model`), its replies
cached with Inspect's cache by default (a GRPO group re-scores the same answer often). An answer whose tree
cannot be scored (a judge reply that stays unparsable) gets `failure_value`, NaN by default: TRL ignores NaN
rewards (nanmean) instead of reading a judge failure as a wrong answer; set it to 0.0 to punish instead.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inspect_ai.model import Model, get_model

from koblex_tasks.benchmarks.legit.issues import Issue
from koblex_tasks.benchmarks.legit.spec import LEGIT_RUBRIC
from koblex_tasks.scorers.judge import JudgeConfig
from koblex_tasks.scorers.legit.arithmetic import check_rule, rubric_score
from koblex_tasks.scorers.legit.judging import judge_tree
from koblex_tasks.scorers.legit.rubric import DEFAULT_JUDGE_TEMPERATURE

__all__ = ["RewardFunction", "completion_text", "legit_reward", "make_legit_reward"]

RewardFunction = Callable[..., list[float]]
COMPONENTS = ("legit_score", "final_order", "coverage", "correctness")
# A component's float sum misses its bound by an ulp or so (5 + 4 x (2/4 + 3/4) is 9.999999999999998 in the
# scripts' order); a trainer reading the reward expects the bound itself.
BOUND_TOLERANCE = 1e-9


def at_bounds(value: float, component: str) -> float:
    """`value` with a bound of `component` (0 or its maximum points) when it misses it by rounding only."""
    spec = next(v for v in LEGIT_RUBRIC.values if v.key == component)
    for bound in (spec.low, spec.high):
        if abs(value - bound) <= BOUND_TOLERANCE:
            return float(bound)
    return value


def completion_text(completion: Any) -> str:
    """A completion as TRL passes it: a string, or (conversational) a list of messages ending in the answer."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        content = completion[-1].get("content")
        if isinstance(content, str):
            return content
    raise TypeError(
        f"a completion must be a string or a list of chat messages, got {type(completion).__name__}"
    )


def _tree(issues: Any) -> list[Issue]:
    """A record's `issues` column: the issue dicts of a LEGIT record (a JSON string is decoded first)."""
    if isinstance(issues, str):
        import json

        issues = json.loads(issues)
    return [issue if isinstance(issue, Issue) else Issue.from_dict(issue) for issue in issues]


def _run(coro: Any) -> Any:
    """Run a coroutine from synchronous trainer code, also when the caller already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def make_legit_reward(
    judge: str | Model,
    rule: str = "paper",
    official_script: bool = False,
    component: str = "legit_score",
    failure_value: float = math.nan,
    retries: int = 2,
    concurrency: int = 8,
    temperature: float | None = None,
    max_tokens: int | None = None,
    cache: bool | str = True,
    prompt_version: str = "v1",
    scale: float = 1.0,
) -> RewardFunction:
    """A reward function scoring completions with the LEGIT rubric through `judge`.

    Args:
        judge: the judge, an Inspect model name or `Model`.
        rule, official_script: the rubric's rule and arithmetic, as `legit_rubric` takes them.
        component: which part of the score is the reward ("legit_score", "final_order", "coverage",
            "correctness").
        failure_value: the reward of an answer the judge could not grade (NaN: no signal; 0.0: a penalty).
        retries, concurrency, temperature, max_tokens, cache, prompt_version: the judge call, as the scorer's.
        scale: multiply the reward (e.g. 0.1 for a 0-1 reward).
    """
    check_rule(rule)
    if component not in COMPONENTS:
        raise ValueError(f"component must be one of {COMPONENTS}, got {component!r}")
    judge_config = JudgeConfig(
        temperature=DEFAULT_JUDGE_TEMPERATURE if temperature is None else temperature,
        max_tokens=max_tokens,
        cache=cache,
    )

    async def score_all(model: Model, answers: list[str], trees: list[list[Issue]]) -> list[float]:
        async def one(answer: str, tree: list[Issue]) -> float:
            judgements = await judge_tree(
                model, answer, tree, retries, judge_config, prompt_version, concurrency
            )
            ids = [i.id for i in tree]
            result = rubric_score(ids, {i: judgements[i].verdict for i in ids}, rule, official_script)
            value = getattr(result, component)
            return failure_value if math.isnan(value) else at_bounds(value, component) * scale

        return list(await asyncio.gather(*(one(a, t) for a, t in zip(answers, trees, strict=True))))

    def legit_reward(
        completions: list[Any], issues: list[Any] | None = None, **record_fields: Any
    ) -> list[float]:
        """LEGIT rubric reward, one float per completion; `issues` is the records' issue-tree column."""
        if issues is None:
            raise ValueError(
                "legit_reward needs the records' `issues` column (the issue tree of each prompt)"
            )
        if len(issues) != len(completions):
            raise ValueError(f"{len(completions)} completions but {len(issues)} issue trees")
        model = judge if isinstance(judge, Model) else get_model(judge)
        answers = [completion_text(c) for c in completions]
        return list(_run(score_all(model, answers, [_tree(i) for i in issues])))

    return legit_reward


def legit_reward(
    completions: list[Any], issues: list[Any] | None = None, *, judge: str | Model, **options: Any
) -> list[float]:
    """One-off call: `legit_reward(completions, issues, judge="openai/gpt-4.1")`; options as `make_legit_reward`.

    For a trainer, build the function once with `make_legit_reward` (TRL passes no `judge`).
    """
    return make_legit_reward(judge, **options)(completions, issues)
