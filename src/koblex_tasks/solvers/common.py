"""Helpers every solver of both benchmarks uses: recorded prompts, model calls, retrieval from task settings.

Retrieval overrides: a solver's `tokenizer` and `reranker` arguments (and LEGIT RAG's `corpus`) replace the
task's setting of that name for that solver only; `None`, the default, keeps the task's. The BM25 tokenizer is
"official" (the paper's regex tokens, the KoBLEX default) or "kiwi" (morphemes); the reranker "none" (BM25
order), "bge" (the paper's) or a cross-encoder id/path. The official KoBLEX baselines used BM25 alone (their
solvers default to reranker "none"); ParSeR reranks with the task's reranker.
"""

from typing import Any

from inspect_ai.model import ChatMessageAssistant, ModelOutput
from inspect_ai.solver import TaskState

from koblex_tasks.corpus.retriever import Retriever, RetrieverSettings, aget_retriever
from koblex_tasks.prompts import Prompt, load_prompt

# Sample-metadata key under which a task stores its retrieval settings for the solvers.
RETRIEVAL_METADATA_KEY = "retrieval"


def require_positive(**values: int | None) -> None:
    """Reject a solver's count arguments when it is built, before any sample runs ("l must be positive": the ones below 1);
    None (an unbounded count) is not checked."""
    bad = [name for name, value in values.items() if value is not None and value < 1]
    if bad:
        raise ValueError(f"{' and '.join(bad)} must be positive")


def recorded_prompt(state: TaskState, family: str, name: str, version: str = "v1") -> Prompt:
    """Load `<family>/<name>` and note its hash in the sample metadata (so the log says which wording ran)."""
    prompt = load_prompt(f"{family}/{name}", version)
    refs = dict(state.metadata.get("prompts", {}))
    refs[name] = prompt.ref
    state.metadata["prompts"] = refs
    return prompt


def replayed_output(state: TaskState, model_name: str, text: str) -> TaskState:
    """A released answer as the sample's output, as if `model_name` had just replied with `text`."""
    state.output = ModelOutput.from_content(model=model_name, content=text)
    state.messages.append(ChatMessageAssistant(content=text, model=model_name))
    return state


def retriever_settings(state: TaskState, **overrides: Any) -> RetrieverSettings:
    """The task's retrieval settings for this sample, with the solver's overrides that are not None."""
    base = RetrieverSettings.from_dict(state.metadata.get(RETRIEVAL_METADATA_KEY))
    changes = {k: v for k, v in overrides.items() if v is not None}
    return RetrieverSettings.from_dict({**base.as_dict(), **changes})


async def sample_retriever(state: TaskState, **overrides: Any) -> Retriever:
    """The process-wide retriever for this sample's settings (built on first use, off the event loop)."""
    return await aget_retriever(retriever_settings(state, **overrides))
