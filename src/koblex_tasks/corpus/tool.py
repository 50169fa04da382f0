"""`search_statutes`: the shared retriever as an Inspect tool, for agentic (model-driven) solvers."""

from inspect_ai.tool import Tool, tool

from koblex_tasks.corpus.retriever import RetrieverSettings, aget_retriever


@tool
def search_statutes(settings: dict[str, object] | None = None, k: int = 5) -> Tool:
    """Search Korean statutes with BM25 (and the configured reranker)."""
    resolved = RetrieverSettings.from_dict(settings)

    async def execute(query: str, top_k: int = k) -> str:
        """Search the Korean statute corpus and return the best matching provisions.

        Args:
            query: Keywords or a sentence describing the legal rule you are looking for (Korean works best).
            top_k: How many provisions to return (1-20).
        """
        retriever = await aget_retriever(resolved)
        top_k = max(1, min(int(top_k), 20))
        depth = max(top_k, 50) if retriever.reranker.name != "none" else top_k
        found = await retriever.aretrieve(query, depth, top=top_k)
        hits = [h for h in found.returned if h.bm25_score != 0.0]  # bm25s' zero-score padding matched nothing
        if not hits:
            return "No provision matched the query."
        return "\n".join(f"[{h.rank + 1}] {h.provision.text}" for h in hits)

    return execute
