"""LEGIT solvers: the grader check, the paper's prediction prompt, and a statute-RAG variant.

`legit_predict` reproduces `reasoning_task_solve.py`: system prompt `prompts/legit/system.v1.txt` (the
official `SYSTEM_PROMPT` verbatim) and the question as the user message. `legit_rag` follows
`reasoning_task_solve_rag.py`'s layout (`- {law}` lines, a blank line, the question) but fills it with the
top provisions of this package's shared statute retriever instead of the paper's precomputed retrieval files.
"""

from typing import Any

from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.prompts import Prompt
from koblex_tasks.scorers import grader_bound
from koblex_tasks.solvers._common import recorded_prompt, sample_retriever

GRADER_ROLE = "grader"


class GraderRequiredError(RuntimeError):
    """LEGIT was started without a `grader` model role."""


NO_GRADER_MESSAGE = (
    "LEGIT cannot be scored without a judge: bind the 'grader' model role, e.g. "
    "`inspect eval koblex_tasks/legit --model <model> --model-role grader=<judge model>` "
    "(or eval(..., model_roles={'grader': ...})). Refusing to generate any answers without one."
)


@solver
def require_grader() -> Solver:
    """Fail the sample before any model call when no `grader` role is bound.

    Used as the task's `setup` step, which Inspect runs first and keeps even when `--solver` replaces the
    main solver. Without this, `get_model(role="grader")` would silently return the model under test.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if not grader_bound():
            raise GraderRequiredError(NO_GRADER_MESSAGE)
        return state

    return solve


def _legit_prompt(state: TaskState, name: str, version: str) -> Prompt:
    return recorded_prompt(state, "legit", name, version)


def _question(state: TaskState) -> str:
    return state.metadata.get("question") or state.input_text


@solver
def legit_predict(prompt_version: str = "v1") -> Solver:
    """The paper's prediction call: expert system prompt, the question (facts + claims) as the user turn."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        system = _legit_prompt(state, "system", prompt_version)
        user = _legit_prompt(state, "predict", prompt_version)
        state.messages = [
            ChatMessageSystem(content=system.render()),
            ChatMessageUser(content=user.render(question=_question(state))),
        ]
        return await generate(state)

    return solve


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
        tokenizer: BM25 tokenizer override ("kiwi" or "official").
        reranker: reranker override ("none", "bge" or a cross-encoder id/path).
        rerank_from: BM25 candidates to rerank (default 4*k) when a reranker is set.
        prompt_version: version of the LEGIT prompt files.
    """
    if k < 1:
        raise ValueError("k must be >= 1")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        retriever = await sample_retriever(state, corpus=corpus, tokenizer=tokenizer, reranker=reranker)
        question = _question(state)
        if retriever.settings.reranker != "none":
            hits = await retriever.asearch(question, rerank_from or 4 * k)
            hits = await retriever.arerank(question, hits, k)
        else:
            hits = await retriever.asearch(question, k)
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
        system = _legit_prompt(state, "system", prompt_version)
        user = _legit_prompt(state, "rag", prompt_version)
        state.messages = [
            ChatMessageSystem(content=system.render()),
            ChatMessageUser(content=user.render(laws=laws, question=question)),
        ]
        return await generate(state)

    return solve
