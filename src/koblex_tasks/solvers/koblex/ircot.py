"""IRCoT (Trivedi et al., 2023, "Interleaving Retrieval with Chain-of-Thought Reasoning for
Knowledge-Intensive Multi-Step Questions"), as KoBLEX ran it (`experiments/ircot/ircot_openai.py`,
daehuikim/KoBLEX).

1. Retrieve the top-k (k = 1) provisions by BM25 for background + question.
2. Reason one sentence per call (stop at . ! ?), shown "<Query> Context / Question / Answer: <sentences so
   far>". Each sentence without "So the final answer is:" is itself the next BM25 query; its provisions are
   appended to the context.
3. After `max_steps` sentences (official: 5) without the marker, " So the final answer is:" is appended and
   the model is asked once more with no stop sequence. The answer is the text after the marker (read by the
   scorers from the reply as written, with the rule recorded in the evidence).

`predicted` is the official `combination_list`: every provision retrieved (the first query's and each
sentence's), in order, duplicates kept, exactly as the released `comb`.

Deviations from the official code:
- With k > 1 it still kept only the top provision (`idxs[0][0]`); we keep all k (the default k = 1 is the same).
- An empty sentence is not used as a query (counted as `empty_sentences`).
- The released script does not run as published (a missing comma in its output record); the logic above is
  read from it. Sampling: max_tokens 4000 per call (official) unless the run sets max_tokens; temperature
  and top_p 0.9 come from the task (its `chat_format`).
"""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.benchmarks.koblex.evidence import AnswerRule
from koblex_tasks.solvers.common import require_positive
from koblex_tasks.solvers.koblex._multihop import (
    Completion,
    MultihopMethod,
    MultihopRun,
    force_final,
    interleaved_reasoning,
)

FINAL = "So the final answer is:"
IRCOT = MultihopMethod("ircot", prompt_prefix="ircot", prompts=("system", "step"))


@solver
def ircot(
    k: int = 1,
    max_steps: int = 5,
    tokenizer: str | None = None,
    reranker: str | None = "none",
    prompt_version: str = "v1",
) -> Solver:
    """IRCoT: every chain-of-thought sentence is the next retrieval query.

    Args:
        k: provisions retrieved per query: the question, then each sentence (KoBLEX: 1).
        max_steps: reasoning sentences before the final answer is forced (official: 5).
        tokenizer, reranker, prompt_version: as for every multi-hop solver (see `_multihop`).
    """
    require_positive(k=k, max_steps=max_steps)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        run = await MultihopRun.start(state, IRCOT, k, tokenizer, reranker, prompt_version)

        async def sentence_as_query(reply: Completion) -> list[str]:
            if not reply.text:
                run.record.count("empty_sentences")
                return []
            return await run.retrieve(reply.text)

        first = await run.retrieve(run.question)
        reasoning = await interleaved_reasoning(run, first, FINAL, max_steps, sentence_as_query)
        run.record.predicted = run.retrieve.keys_of(reasoning.contexts)
        last = reasoning.steps[-1]
        if FINAL in last and reasoning.last is not None:
            return run.adopt(reasoning.last, AnswerRule("after_marker", (FINAL,)))
        final = await force_final(run, reasoning, FINAL)
        echo = (last,) if last else ()  # official: drop an echo of the last step before the marker
        return run.adopt(final, AnswerRule("after_marker", (*echo, FINAL)))

    return solve
