"""One-time retrieval (KoBLEX Table 2, "Standard Retrieval"): retrieve once with the whole question, answer.

The query is background + question. The paper retrieved exactly as many provisions as the item has gold ones,
which leaks the gold count into the method; `k="gold"` reproduces that, the default is a fixed k.
"""

from typing import Literal

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.solvers.common import sample_retriever
from koblex_tasks.solvers.koblex._common import (
    answer_with_prompt,
    evidence,
    join_provisions,
    koblex_prompt,
    official_question,
)

RERANK_DEPTH = 100


@solver
def one_time_retrieval(
    k: int | Literal["gold"] = 3,
    cot: bool = False,
    tokenizer: str | None = None,
    reranker: str | None = None,
    prompt_version: str = "v1",
) -> Solver:
    """Retrieve the top-k provisions for the question and answer grounded in them.

    Args:
        k: provisions to retrieve, or "gold" for the paper's (leaky) number of gold provisions.
        cot: reason before answering (the paper's "CoT + one-time retrieval").
        tokenizer: override the task's BM25 tokenizer.
        reranker: override the task's reranker; with one, BM25 fetches 100 candidates and the reranker keeps k.
    """
    if k != "gold" and (not isinstance(k, int) or k < 1):
        raise ValueError(f"k must be a positive integer or 'gold', got {k!r}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = evidence("cot_one_time_retrieval" if cot else "one_time_retrieval", uses_retrieval=True)
        n = len(state.metadata["gold_provisions"]) if k == "gold" else int(k)
        retriever = await sample_retriever(state, tokenizer=tokenizer, reranker=reranker)
        query = official_question(state)
        depth = n if retriever.reranker.name == "none" else max(n, RERANK_DEPTH)
        hits = await retriever.arerank(state.metadata["question"], await retriever.asearch(query, depth), n)
        keys = [h.provision.key for h in hits]
        record.queries = [query]
        record.retrieved = [keys]
        record.predicted = keys
        prompt = koblex_prompt(state, "cot_or" if cot else "sp_or", prompt_version)
        return await answer_with_prompt(
            state, generate, prompt.render(question=query, context_str=join_provisions(keys))
        )

    return solve
