"""Asking the LEGIT judge about one issue node, and reading its verdict out of the reply.

Per node (root included) the judge gets the paper's prompt (`prompts/legit/judge.v1.txt`, the official
`prompts/evaluate_issue_in_response.txt` verbatim) with the answer, the node's summary, its claims
(`claimer: content` lines) and its conclusion, and replies with JSON
`{"rationales": str, "contains_issue": bool, "correct_conclusion": bool}`.

Deviations from the official call, on purpose: the official OpenAI path requests `response_format=json_object`
and skips the issue on a parse failure; we ask for plain text, parse `<OUTPUT>{...}</OUTPUT>`, fenced or bare
JSON (see `parse_judge_reply`) and retry an unparsable reply up to `retries` more times. The official call sends
an empty system prompt; we send only the user message.
"""

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import anyio
from inspect_ai.model import CachePolicy, ChatMessageUser, Model, ModelUsage

from koblex_tasks.benchmarks.legit.issues import Issue
from koblex_tasks.prompts import load_prompt
from koblex_tasks.scorers.judge import JudgeConfig
from koblex_tasks.scorers.legit.arithmetic import Verdict, label_record

T = TypeVar("T")

JUDGE_PROMPT = "legit/judge"

_OUTPUT_TAG = re.compile(r"<OUTPUT>(.*?)(?:</OUTPUT>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


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


def verdict_from_object(obj: dict[str, Any]) -> Verdict | None:
    """The verdict in a parsed judge object; both flags must be JSON booleans ("yes", 1 are not guessed)."""
    contains, correct = obj.get("contains_issue"), obj.get("correct_conclusion")
    if not (isinstance(contains, bool) and isinstance(correct, bool)):
        return None
    rationale = obj.get("rationales", obj.get("rationale"))
    return Verdict(contains, correct, rationale if isinstance(rationale, str) else None)


def parse_judge_reply(text: str) -> Verdict | None:
    """The verdict in a judge reply, or None when it is unparsable.

    Accepts the prompt's `<OUTPUT>{...}</OUTPUT>` (the closing tag may be missing: the prompt ends with
    `<OUTPUT>`), a ```json fence, or bare JSON. Both flags must be JSON booleans; anything else (missing keys,
    "yes", 1) is unparsable rather than guessed.
    """
    for obj in reply_objects(text):
        verdict = verdict_from_object(obj)
        if verdict is not None:
            return verdict
    return None


def reply_objects(text: str) -> Iterator[dict[str, Any]]:
    """The JSON objects a judge reply may hold, most explicit first: `<OUTPUT>` tags, ```json fences, bare.

    Shared by every LEGIT judge (rubric, Likert), so both read replies the same way.
    """
    candidates = [m.group(1) for m in _OUTPUT_TAG.finditer(text)]
    candidates += [m.group(1) for m in _FENCE.finditer(text)]
    candidates.append(text)
    for candidate in candidates:
        obj = _json_object(candidate)
        if obj is not None:
            yield obj


def judge_prompt_text(response: str, issue: Issue, version: str = "v1") -> str:
    return load_prompt(JUDGE_PROMPT, version).render(
        response=response, summary=issue.summary, claims=issue.claims_text(), conclusion=issue.conclusion
    )


@dataclass
class IssueJudgement:
    issue_id: str
    verdict: Verdict | None = None
    replies: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    usage: ModelUsage = field(default_factory=ModelUsage)

    def metadata(self, score: float | None) -> dict[str, Any]:
        """What the score metadata keeps of this node: labels, its points, the raw replies."""
        return {**label_record(self.verdict, score), **attempts_record(self.replies, self.errors)}


def attempts_record(replies: list[str], errors: list[str]) -> dict[str, Any]:
    """What a score's metadata keeps of a judge prompt's attempts: how many, the last raw reply, the earlier
    unparsable ones (when the judge was retried) and the errors."""
    return {
        "attempts": len(replies),
        "raw": replies[-1] if replies else None,
        "raw_retried": replies[:-1],
        "errors": errors,
    }


@dataclass
class JudgeAttempts(Generic[T]):
    """One judge prompt asked until its reply parses: the parsed value (None: never), every reply, errors."""

    value: T | None = None
    replies: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    usage: ModelUsage = field(default_factory=ModelUsage)


def attempt_cache(judge_config: JudgeConfig, attempt: int) -> bool | CachePolicy:
    """The judge's cache policy, scoped by attempt: a retry must not be answered by the cached reply it
    retries, and re-scoring replays every attempt from the cache."""
    policy = judge_config.cache_policy()
    if isinstance(policy, CachePolicy):
        return policy.model_copy(update={"scopes": {**policy.scopes, "legit_judge_attempt": str(attempt)}})
    return policy


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
    asked = await judge_until_parsed(judge, prompt, retries, judge_config, parse_judge_reply)
    return IssueJudgement(issue.id, asked.value, asked.replies, asked.errors, asked.usage)


async def judge_until_parsed(
    judge: Model, prompt: str, retries: int, judge_config: JudgeConfig, parse: Callable[[str], T | None]
) -> JudgeAttempts[T]:
    """Ask `prompt` (one user turn), again up to `retries` more times while `parse` finds nothing in the
    reply; each attempt cached under its own scope (`attempt_cache`)."""
    result: JudgeAttempts[T] = JudgeAttempts()
    config = judge_config.generate_config()
    for attempt in range(retries + 1):
        cache = attempt_cache(judge_config, attempt)
        output = await judge.generate([ChatMessageUser(content=prompt)], config=config, cache=cache)
        if output.usage is not None:
            result.usage = result.usage + output.usage
        result.replies.append(output.completion)
        if output.error:
            result.errors.append(str(output.error))
        result.value = parse(output.completion)
        if result.value is not None:
            break
    return result


async def judge_tree(
    judge: Model,
    response: str,
    issues: Sequence[Issue],
    retries: int,
    judge_config: JudgeConfig,
    prompt_version: str = "v1",
    concurrency: int = 8,
) -> dict[str, IssueJudgement]:
    """Judge every node of a tree, `concurrency` calls in flight: what the scorer and the reward both do."""
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
    return {issue.id: judgements[issue.id] for issue in issues}
