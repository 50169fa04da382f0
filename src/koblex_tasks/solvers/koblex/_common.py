"""Helpers shared by the KoBLEX solvers: the evidence record, the official question, retrieval, chat turns.

Chat format (the task's `chat_format`, in each sample's `generation` metadata): `system_user` sends the
method's system prompt as a system turn and the filled template as a user turn, as the official vLLM scripts
do; `user` sends one user message "<system>\\n\\n<template>", as the official OpenAI scripts do; `auto` (the
default) picks one per request from the provider of the model called (`solvers.backends`): self-served
servers get the vLLM scripts' shape, hosted APIs the OpenAI scripts'. Prompt version
"v1" is the single-file wording of earlier releases (always one user message). Each call's max_tokens is its
stage's limit (`benchmarks.koblex.spec.GENERATION`) unless the run sets max_tokens itself (`--max-tokens`);
under "system_user" (the vLLM scripts) every call also sends the stage's seed and, to a self-served server,
`enable_thinking=False` (never to a hosted API, whose schema has no such field).
Solvers leave the model's completion as written; the scorers extract the answer with the recorded rule.
"""

from dataclasses import dataclass
from typing import Any, Literal

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, TaskState
from inspect_ai.util import store_as

from koblex_tasks._inspect_compat import run_generate_config
from koblex_tasks.benchmarks.koblex.evidence import OFFICIAL_ANSWER, AnswerRule, ProvisionEvidence
from koblex_tasks.benchmarks.koblex.spec import GENERATION, KOBLEX
from koblex_tasks.corpus.provision import Provision
from koblex_tasks.corpus.retriever import Hit, Retriever, TieOrder
from koblex_tasks.prompts import Prompt
from koblex_tasks.solvers.backends import Backend
from koblex_tasks.solvers.common import recorded_prompt

RERANK_DEPTH = 100  # BM25 candidates a reranker picks from
GENERATION_METADATA_KEY = "generation"  # sample metadata: {"chat_format": ..., "max_tokens": {stage: n}}
ChatFormat = Literal["system_user", "user"]
CHAT_FORMATS: tuple[ChatFormat, ...] = ("system_user", "user")
AUTO: Literal["auto"] = "auto"  # the shape follows the provider of the model called (`solvers.backends`)
RequestedFormat = Literal["auto", "system_user", "user"]
REQUESTED_FORMATS: tuple[RequestedFormat, ...] = (AUTO, *CHAT_FORMATS)
PAPER_CHAT_FORMAT: ChatFormat = KOBLEX.paper_protocol["chat_format"]
SINGLE_FILE_VERSION = "v1"  # prompt files of this version hold system and template in one text
SYSTEM_VERSION = "v1"  # version of the `<name>_system` files paired with the split templates


def evidence(method: str, uses_retrieval: bool, answer_rule: AnswerRule | None = None) -> ProvisionEvidence:
    """The sample's evidence record, stamped with the method that fills it (and its answer rule, if given)."""
    record = store_as(ProvisionEvidence)
    record.method = method
    record.uses_retrieval = uses_retrieval
    if answer_rule is not None:
        record.answer_rule = answer_rule.as_dict()
    return record


def koblex_prompt(state: TaskState, name: str, version: str = "v1") -> Prompt:
    return recorded_prompt(state, "koblex", name, version)


def official_question(state: TaskState) -> str:
    """Background and question joined with no separator, exactly as the official scripts build `$question`."""
    return state.metadata["background"] + state.metadata["question"]


async def top_provisions(retriever: Retriever, query: str, k: int, rerank_against: str) -> list[Provision]:
    """BM25's top k for `query`; with a reranker, its top k against `rerank_against` of BM25's top 100.

    The evidence records their `key`s (what is scored), prompts show their `text` (one string for a
    paragraph; an article's key is not its text). The retriever records the call in the sample's events."""
    depth = k if retriever.reranker.name == "none" else max(k, RERANK_DEPTH)
    found = await retriever.aretrieve(query, depth, top=k, rerank_query=rerank_against, ties="text")
    return [h.provision for h in found.returned]


def rerank_as_scripts(
    retriever: Retriever, query: str, hits: list[Hit], top: int, ties: TieOrder = "text"
) -> list[Hit]:
    """The reranker's top `top` of `hits` in the official scripts' order.

    The refactored scripts sort `sorted(zip(scores, texts), reverse=True)`: equal scores are ordered by
    passage text, descending (`ties="text"`). ParSeR's original scripts sort by the score alone
    (`key=lambda x: x[0]`, a stable sort): equal scores keep the first-stage order (`ties="first_stage"`).
    Which one decides the candidates shown when scores tie.
    """
    if retriever.reranker.name == "none":
        return hits[:top]
    return retriever.rerank(query, hits, top, ties)


def join_provisions(texts: list[str]) -> str:
    return "\n".join(texts)


@dataclass(frozen=True)
class Generation:
    """A sample's chat format and per-stage max_tokens, as the task set them."""

    chat_format: ChatFormat
    max_tokens: dict[str, int]

    @classmethod
    def of(cls, state: TaskState) -> "Generation":
        """The sample's settings, `auto` resolved for the model under evaluation."""
        recorded: dict[str, Any] = state.metadata.get(GENERATION_METADATA_KEY) or {}
        requested = recorded.get("chat_format") or PAPER_CHAT_FORMAT
        if requested not in REQUESTED_FORMATS:
            raise ValueError(f"chat_format must be one of {REQUESTED_FORMATS}, got {requested!r}")
        chat_format = resolve_chat_format(requested, get_model())
        limits = recorded.get("max_tokens") if requested != AUTO else None
        return cls(chat_format, dict(limits or GENERATION[chat_format]["max_tokens"]))

    def config(self, stage: str) -> GenerateConfig:
        """The call's settings as the official script of this chat format sent them for `stage`.

        max_tokens (unless the run sets it), the seed (unless the run sets one), the chat-template
        arguments (unless the run sends its own `extra_body`), logprobs where the script asked, and the
        stage's temperature where it differs from the task's (unless the run changed the task's).
        """
        return stage_config(self.chat_format, stage, self.max_tokens.get(stage))


def resolve_chat_format(requested: str, model: Model) -> ChatFormat:
    """The chat format sent to `model`: the one the task forces, else its provider's (`auto`)."""
    return Backend.of(model).chat_format(requested, PAPER_CHAT_FORMAT)


def stage_config(chat_format: ChatFormat, stage: str, max_tokens: int | None) -> GenerateConfig:
    """See `Generation.config`: the official script's settings for one call, yielding to the run's own.

    Temperature and top_p are the chat format's unless the run (task, command line) sets them; vLLM's
    chat-template arguments go only to a provider that takes them (`Backend.takes_vllm_extensions`)."""
    paper = GENERATION[chat_format]
    model = get_model()
    run = run_generate_config(model)
    values: dict[str, Any] = {}
    if max_tokens is not None and run.max_tokens is None:
        values["max_tokens"] = max_tokens
    seed = (paper.get("seed") or {}).get(stage)
    if seed is not None and run.seed is None:
        values["seed"] = seed
    extensions = paper.get("chat_template_kwargs")
    if extensions and run.extra_body is None and Backend.of(model).takes_vllm_extensions:
        values["extra_body"] = {"chat_template_kwargs": dict(extensions)}
    top = (paper.get("top_logprobs") or {}).get(stage)
    if top is not None:
        values.update(logprobs=True, top_logprobs=top)
    if run.top_p is None:
        values["top_p"] = paper["top_p"]
    temperature = (paper.get("stage_temperature") or {}).get(stage, paper["temperature"])
    if run.temperature in (None, paper["temperature"]):
        values["temperature"] = temperature
    return GenerateConfig(**values)


@dataclass(frozen=True)
class StagePrompt:
    """A method's prompt for one model call: its template and, for split versions, its system text."""

    template: Prompt
    system: Prompt | None

    @classmethod
    def load(
        cls,
        state: TaskState,
        name: str,
        version: str,
        system_name: str | None = None,
        system_version: str = SYSTEM_VERSION,
    ) -> "StagePrompt":
        """`koblex/<name>.<version>` and, unless `version` is the single-file v1, `<system_name>_system`."""
        template = koblex_prompt(state, name, version)
        if version == SINGLE_FILE_VERSION:
            return cls(template, None)
        return cls(template, koblex_prompt(state, f"{system_name or name}_system", system_version))

    def messages(self, chat_format: ChatFormat, **values: str) -> list[ChatMessage]:
        user = self.template.render(**values)
        if self.system is None:
            return [ChatMessageUser(content=user)]
        if chat_format == "system_user":
            return [ChatMessageSystem(content=self.system.text), ChatMessageUser(content=user)]
        return [ChatMessageUser(content=f"{self.system.text}\n\n{user}")]  # the OpenAI scripts' f-string


def stage_logprobs(config: GenerateConfig, logprobs: bool | None) -> GenerateConfig:
    """`config` with vLLM's logprobs=1 asked (True) or not (False); None leaves the spec's choice."""
    if logprobs is None:
        return config
    return config.model_copy(
        update={"logprobs": True if logprobs else None, "top_logprobs": 1 if logprobs else None}
    )


async def ask_stage(
    state: TaskState, stage: str, prompt: StagePrompt, logprobs: bool | None = None, **values: str
) -> ModelOutput:
    """One intermediate call to the model under evaluation in the sample's chat format and stage limit
    (`logprobs`: a method whose scripts ask for them on other stages than the spec's)."""
    generation = Generation.of(state)
    return await get_model().generate(
        prompt.messages(generation.chat_format, **values),
        config=stage_logprobs(generation.config(stage), logprobs),
    )


async def answer_with(
    state: TaskState, generate: Generate, prompt: StagePrompt, logprobs: bool | None = None, **values: str
) -> TaskState:
    """Final model call: the prompt becomes the conversation; the completion stays as the model wrote it.

    The answer is the text after the last "Answer:" (the official rule), read by the scorers.
    """
    store_as(ProvisionEvidence).answer_rule = OFFICIAL_ANSWER.as_dict()
    generation = Generation.of(state)
    state.messages = prompt.messages(generation.chat_format, **values)
    config = stage_logprobs(generation.config("answer"), logprobs).model_dump(exclude_none=True)
    return await generate(state, **config)


async def answer_closed_book(
    state: TaskState,
    generate: Generate,
    method: str,
    prompt_name: str,
    version: str,
    system_names: dict[ChatFormat, str] | None = None,
) -> TaskState:
    """A closed-book method: one few-shot prompt on background + question, no statutes retrieved.

    `system_names` picks the system prompt per chat format where the official scripts differ (CoT).
    """
    evidence(method, uses_retrieval=False)
    system_name = (system_names or {}).get(Generation.of(state).chat_format)
    prompt = StagePrompt.load(state, prompt_name, version, system_name)
    return await answer_with(state, generate, prompt, question=official_question(state))
