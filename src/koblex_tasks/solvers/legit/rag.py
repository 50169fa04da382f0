"""`legit_rag`: laws above the question, in the official RAG layout (`reasoning_task_solve_rag.py`).

The official script reads precomputed retrieval files (`data/lawretrieval_test_<method>.jsonl`, not released)
and writes one `- {law}` line per law, a blank line, then the question, under the expert system prompt.
Two sources fill that layout here (`retrieval=`):

* `"bm25"` (default): the top-`k` provisions of this package's statute retriever over any corpus in the
  statute-corpus format (`corpus=` or the task's `-T corpus=`; default the KoBLEX statute corpus).
* `"citations"`: the laws the court cited in this record's issue tree (`relevant_law` of each issue, in tree
  order, each once): the paper's *ground-truth retrieval* input. It reads the court's citations, not its
  conclusions or reasoning, and the sample metadata says so (`legit_retrieval.ground_truth`): results under it
  are an oracle-retrieval upper bound, never a model's own retrieval.
"""

from typing import Any, Literal

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.benchmarks.legit.issues import issues_from_metadata
from koblex_tasks.solvers.common import require_positive, sample_retriever
from koblex_tasks.solvers.legit._common import expert_conversation, question
from koblex_tasks.solvers.preflight import require_corpus


def format_provision(hierarchy: str, content: str) -> str:
    return f"{hierarchy} {content}".strip()


Retrieval = Literal["bm25", "citations"]
RETRIEVALS: tuple[str, ...] = ("bm25", "citations")
GROUND_TRUTH_NOTE = (
    "ground-truth retrieval: the laws the court cited in this record's issue tree (relevant_law), "
    "not retrieved by the model; the court's conclusions and reasoning are not shown"
)


def law_lines(laws: list[str]) -> str:
    """The official layout's law block: one `- {law}` line per law."""
    return "".join(f"- {law}\n" for law in laws)


def cited_laws(metadata: dict[str, Any]) -> list[str]:
    """The record's citations: every issue's `relevant_law`, in tree order, each law once."""
    return list(dict.fromkeys(law for issue in issues_from_metadata(metadata) for law in issue.relevant_law))


@solver
def legit_rag(
    retrieval: Retrieval = "bm25",
    corpus: str | None = None,
    k: int = 5,
    tokenizer: str | None = None,
    reranker: str | None = None,
    rerank_from: int | None = None,
    prompt_version: str = "v1",
) -> Solver:
    """Put laws above the question (`- law` lines): retrieved provisions, or the court's own citations.

    Args:
        retrieval: "bm25" (the statute retriever, top `k`) or "citations" (the record's cited laws, all of
            them: ground-truth retrieval; `k` and the retriever settings do not apply).
        corpus: local statute JSONL (default: the task's corpus setting, else the hub statute dataset).
        k: provisions in the prompt.
        tokenizer, reranker: retrieval overrides (see `solvers.common`).
        rerank_from: BM25 candidates to rerank (default 4*k) when a reranker is set.
        prompt_version: version of the LEGIT prompt files.
    """
    require_positive(k=k)
    if retrieval not in RETRIEVALS:
        raise ValueError(f"retrieval must be one of {RETRIEVALS}, got {retrieval!r}")
    if retrieval == "bm25":
        require_corpus(corpus=corpus, tokenizer=tokenizer, reranker=reranker)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if retrieval == "citations":
            cited = cited_laws(state.metadata)
            state.metadata["legit_retrieval"] = {
                "retrieval": "citations",
                "ground_truth": True,
                "note": GROUND_TRUTH_NOTE,
                "laws": cited,
            }
            expert_conversation(state, "rag", prompt_version, laws=law_lines(cited), question=question(state))
            return await generate(state)
        retriever = await sample_retriever(state, corpus=corpus, tokenizer=tokenizer, reranker=reranker)
        text = question(state)
        if retriever.settings.reranker != "none":
            hits = (await retriever.aretrieve(text, rerank_from or 4 * k, top=k)).returned
        else:
            hits = (await retriever.aretrieve(text, k)).returned
        laws = law_lines([format_provision(h.provision.hierarchy, h.provision.content) for h in hits])
        record: dict[str, Any] = {
            "retrieval": "bm25",
            "ground_truth": False,
            "k": k,
            "settings": retriever.settings.as_dict(),
            "hits": [
                {"rank": h.rank, "key": h.provision.key, "bm25": h.bm25_score, "rerank": h.rerank_score}
                for h in hits
            ],
        }
        state.metadata["legit_retrieval"] = record
        expert_conversation(state, "rag", prompt_version, laws=laws, question=text)
        return await generate(state)

    return solve
