"""Helpers shared by the KoBLEX solvers: the evidence record, the official question, retrieval, the answer."""

from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import Generate, TaskState
from inspect_ai.util import store_as

from koblex_tasks.corpus.retriever import Retriever
from koblex_tasks.prompts import Prompt
from koblex_tasks.solvers.common import recorded_prompt
from koblex_tasks.tasks.koblex.evidence import ProvisionEvidence

RERANK_DEPTH = 100  # BM25 candidates a reranker picks from


def evidence(method: str, uses_retrieval: bool) -> ProvisionEvidence:
    """The sample's evidence record, stamped with the method that fills it."""
    record = store_as(ProvisionEvidence)
    record.method = method
    record.uses_retrieval = uses_retrieval
    return record


def koblex_prompt(state: TaskState, name: str, version: str = "v1") -> Prompt:
    return recorded_prompt(state, "koblex", name, version)


def official_question(state: TaskState) -> str:
    """Background and question joined with no separator, exactly as the official scripts build `$question`."""
    return state.metadata["background"] + state.metadata["question"]


async def top_provisions(retriever: Retriever, query: str, k: int, rerank_against: str) -> list[str]:
    """Keys of BM25's top k for `query`; with a reranker, its top k against `rerank_against` of BM25's top 100."""
    depth = k if retriever.reranker.name == "none" else max(k, RERANK_DEPTH)
    hits = await retriever.arerank(rerank_against, await retriever.asearch(query, depth), k)
    return [h.provision.key for h in hits]


def answer_after_marker(completion: str, marker: str = "Answer:") -> str:
    """The text after the last `Answer:` (the official extraction), or the whole completion if absent."""
    return completion.split(marker)[-1].strip()


async def answer_with_prompt(state: TaskState, generate: Generate, prompt_text: str) -> TaskState:
    """Final model call: the prompt becomes the conversation, the extracted answer becomes the output.

    The raw completion stays in the sample metadata so extraction can be audited.
    """
    state.messages = [ChatMessageUser(content=prompt_text)]
    state = await generate(state)
    raw = state.output.completion
    state.metadata["raw_completion"] = raw
    state.output.completion = answer_after_marker(raw)
    return state


def join_provisions(keys: list[str]) -> str:
    return "\n".join(keys)


async def answer_closed_book(
    state: TaskState, generate: Generate, method: str, prompt_name: str, version: str
) -> TaskState:
    """A closed-book method: one few-shot prompt on background + question, no statutes retrieved."""
    evidence(method, uses_retrieval=False)
    prompt = koblex_prompt(state, prompt_name, version)
    return await answer_with_prompt(state, generate, prompt.render(question=official_question(state)))
