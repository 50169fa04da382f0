"""`legit_rag`: statute provisions from the shared retriever above the question.

Follows `reasoning_task_solve_rag.py`'s layout (`- {law}` lines, a blank line, the question) but fills it with
the top provisions of this package's statute retriever instead of the paper's precomputed retrieval files.
"""

from typing import Any

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.solvers.common import require_positive, sample_retriever
from koblex_tasks.solvers.legit._common import expert_conversation, question


def format_provision(hierarchy: str, content: str) -> str:
    return f"{hierarchy} {content}".strip()


@solver
def legit_rag(
    corpus: str | None = None,
    k: int = 5,
    tokenizer: str | None = None,
    reranker: str | None = None,
    rerank_from: int | None = None,
    prompt_version: str = "v1",
) -> Solver:
    """Retrieve the top-`k` statute provisions for the question and put them above it (`- provision` lines).

    Args:
        corpus: local statute JSONL (default: the task's corpus setting, else the hub statute dataset).
        k: provisions in the prompt.
        tokenizer, reranker: retrieval overrides (see `solvers.common`).
        rerank_from: BM25 candidates to rerank (default 4*k) when a reranker is set.
        prompt_version: version of the LEGIT prompt files.
    """
    require_positive(k=k)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        retriever = await sample_retriever(state, corpus=corpus, tokenizer=tokenizer, reranker=reranker)
        text = question(state)
        if retriever.settings.reranker != "none":
            hits = await retriever.asearch(text, rerank_from or 4 * k)
            hits = await retriever.arerank(text, hits, k)
        else:
            hits = await retriever.asearch(text, k)
        laws = "".join(f"- {format_provision(h.provision.hierarchy, h.provision.content)}\n" for h in hits)
        retrieval: dict[str, Any] = {
            "k": k,
            "settings": retriever.settings.as_dict(),
            "hits": [
                {"rank": h.rank, "key": h.provision.key, "bm25": h.bm25_score, "rerank": h.rerank_score}
                for h in hits
            ],
        }
        state.metadata["legit_retrieval"] = retrieval
        expert_conversation(state, "rag", prompt_version, laws=laws, question=text)
        return await generate(state)

    return solve
