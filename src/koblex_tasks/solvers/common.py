"""Helpers every solver of both benchmarks uses: recorded prompts, model calls, retrieval from task settings."""

from typing import Any

from inspect_ai.model import ChatMessageUser, GenerateConfig, ModelOutput, get_model
from inspect_ai.solver import TaskState

from koblex_tasks.corpus.retriever import Retriever, RetrieverSettings, aget_retriever
from koblex_tasks.prompts import Prompt, load_prompt

# Sample-metadata key under which a task stores its retrieval settings for the solvers.
RETRIEVAL_METADATA_KEY = "retrieval"


def recorded_prompt(state: TaskState, family: str, name: str, version: str = "v1") -> Prompt:
    """Load `<family>/<name>` and note its hash in the sample metadata (so the log says which wording ran)."""
    prompt = load_prompt(f"{family}/{name}", version)
    refs = dict(state.metadata.get("prompts", {}))
    refs[name] = prompt.ref
    state.metadata["prompts"] = refs
    return prompt


async def ask(prompt_text: str, config: GenerateConfig | None = None) -> ModelOutput:
    """One intermediate call to the model under evaluation (not the final answer)."""
    return await get_model().generate(
        [ChatMessageUser(content=prompt_text)], config=config or GenerateConfig()
    )


def retriever_settings(state: TaskState, **overrides: Any) -> RetrieverSettings:
    """The task's retrieval settings for this sample, with any solver-level overrides that are not None."""
    base = RetrieverSettings.from_dict(state.metadata.get(RETRIEVAL_METADATA_KEY))
    changes = {k: v for k, v in overrides.items() if v is not None}
    return RetrieverSettings.from_dict({**base.as_dict(), **changes})


async def sample_retriever(state: TaskState, **overrides: Any) -> Retriever:
    """The process-wide retriever for this sample's settings (built on first use, off the event loop)."""
    return await aget_retriever(retriever_settings(state, **overrides))
