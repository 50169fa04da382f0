"""One-time retrieval (KoBLEX Table 2, "Standard Retrieval"): retrieve once with the whole question, answer.

The query is background + question. The paper retrieved exactly as many provisions as the item has gold ones
(every released `sp_or`/`cot_or` file: 226/226 rows; the dataset's `n_hops` would give 220/226), which leaks
the gold count into the method; `k="gold"` reproduces that and is the default (only the count reaches the
solver, as `gold_count` in the sample metadata, never the provisions); an integer k is a fixed depth.
The prompts are sent in the task's `chat_format` (`sp_or_vllm.py` / `cot_or_vllm.py`: system + user turns;
the OpenAI scripts: one user message); the answer is the text after the last "Answer:", except that
`sp_or_vllm.py` writes its reply whole (kept by the paper's protocol: `official_answer_prefix_bug`).
"""

from typing import Literal

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.benchmarks.koblex.evidence import AnswerRule
from koblex_tasks.solvers.common import sample_retriever
from koblex_tasks.solvers.koblex._common import (
    Generation,
    StagePrompt,
    answer_with,
    evidence,
    join_provisions,
    official_question,
    top_provisions,
)

TRACED_COT_OPENAI_ANSWER = AnswerRule("after_marker", ("Answer: ",))  # the released GPT-4o CoT+OR rows


@solver
def one_time_retrieval(
    k: int | Literal["gold"] = "gold",
    cot: bool = False,
    tokenizer: str | None = None,
    reranker: str | None = "none",
    prompt_version: str = "v2",
    official_answer_prefix_bug: bool = True,
    script_answer_marker: bool = False,
) -> Solver:
    """Retrieve the top-k provisions for the question and answer grounded in them.

    Args:
        k: provisions to retrieve, or "gold" (default) for the paper's (leaky) number of gold provisions.
        cot: reason before answering (the paper's "CoT + one-time retrieval").
        tokenizer, reranker: retrieval overrides (see `solvers.common`); reranker "none" by default (the
            official baseline: BM25 alone; None takes the task's); with a reranker, BM25 fetches 100
            candidates and the reranker keeps k.
        prompt_version: version of the `sp_or` / `cot_or` templates ("v2" with their `_system` files; "v1" the
            single-file wording).
        official_answer_prefix_bug: on the vLLM chat format without CoT, score the reply whole ("Answer: "
            included), as `sp_or_vllm.py` writes it (every other script keeps the text after "Answer:").
        script_answer_marker: on the OpenAI chat format with CoT, read the answer after the last "Answer:" as
            `cot_or_openai.py` does; the released GPT-4o rows were read after "Answer: " (with its space): the
            26 of 226 rows whose reply has "Answer:\n" hold the whole reply, none holds "Answer: ".
    """
    if k != "gold" and (not isinstance(k, int) or k < 1):
        raise ValueError(f"k must be a positive integer or 'gold', got {k!r}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = evidence("cot_one_time_retrieval" if cot else "one_time_retrieval", uses_retrieval=True)
        # k="gold": the number of gold provisions at the corpus' level (a count; the gold never reaches a solver)
        n = int(state.metadata["gold_count"]) if k == "gold" else int(k)
        retriever = await sample_retriever(state, tokenizer=tokenizer, reranker=reranker)
        query = official_question(state)
        provisions = await top_provisions(retriever, query, n, rerank_against=state.metadata["question"])
        keys = [p.key for p in provisions]
        record.queries = [query]
        record.retrieved = [keys]
        record.predicted = keys
        prompt = StagePrompt.load(state, "cot_or" if cot else "sp_or", prompt_version)
        context = join_provisions([p.text for p in provisions])
        state = await answer_with(state, generate, prompt, question=query, context_str=context)
        chat_format = Generation.of(state).chat_format
        if official_answer_prefix_bug and not cot and chat_format == "system_user":
            record.answer_rule = AnswerRule().as_dict()  # the reply as written, "Answer: " and all
        if cot and chat_format == "user" and not script_answer_marker:
            record.answer_rule = TRACED_COT_OPENAI_ANSWER.as_dict()
        return state

    return solve
