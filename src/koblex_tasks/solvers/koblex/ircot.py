"""IRCoT (Trivedi et al., 2023, "Interleaving Retrieval with Chain-of-Thought Reasoning for
Knowledge-Intensive Multi-Step Questions"), as KoBLEX ran it (`experiments/ircot/ircot_openai.py` and
`ircot_qwen.py`, daehuikim/KoBLEX).

1. Retrieve the top-k (k = 1) provisions by BM25 for background + question.
2. Reason one sentence per call (stop at . ! ?), shown "<Query> Context / Question / Answer: <sentences so
   far>". Each sentence without the final-answer marker is itself the next BM25 query; its provisions are
   appended to the context.
3. After `max_steps` sentences without the marker, the marker is appended and the model is asked once more.
   The answer is the text after the marker (read by the scorers from the reply as written, with the rule
   recorded in the evidence).

The two scripts differ, and the task's `chat_format` picks which one runs (the paper's protocol for each):
- OpenAI ("user"): looks for "So the final answer is:" (what its system prompt asks for), 5 steps, the
  forced call has no stop sequence.
- vLLM ("system_user"): looks for "So the answer is:" while the prompt asks for "So the final answer is:",
  so it never stops early and always runs all 8 steps; the forced call appends " So the answer is:" and
  stops at "\\n". The marker mismatch is a bug kept by the paper's protocol; `official_marker_bug=False`
  looks for the marker the prompt asks for (and appends it).

`predicted` is the official `combination_list`: every provision retrieved (the first query's and each
sentence's), in order, duplicates kept, exactly as the released `comb`.

Deviations from the official code:
- With k > 1 it still kept only the top provision (`idxs[0][0]`); we keep all k (the default k = 1 is the same).
- An empty sentence is not used as a query (counted as `empty_sentences`).
- The released OpenAI script does not run as published (a missing comma in its output record); the logic
  above is read from it. Sampling: max_tokens 4000, temperature 0.0, top_p 0.9 per call (both scripts),
  unless the run sets them; vLLM calls also send seed 0 and `enable_thinking=False`.
"""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.benchmarks.koblex.evidence import AnswerRule
from koblex_tasks.solvers.common import require_positive
from koblex_tasks.solvers.koblex._multihop import (
    Completion,
    MultihopMethod,
    MultihopRun,
    follows_vllm_script,
    force_final,
    interleaved_reasoning,
)

FINAL = "So the final answer is:"  # what the system prompt asks for
VLLM_MARKER = "So the answer is:"  # what the vLLM script looks for and appends
MAX_STEPS = {"vllm": 8, "openai": 5}
VLLM_FINAL_STOP = ["\n"]
IRCOT = MultihopMethod("ircot", prompt_prefix="ircot", prompts=("system", "step"))


@solver
def ircot(
    k: int = 1,
    max_steps: int | None = None,
    official_marker_bug: bool = True,
    tokenizer: str | None = None,
    reranker: str | None = "none",
    prompt_version: str = "v1",
) -> Solver:
    """IRCoT: every chain-of-thought sentence is the next retrieval query.

    Args:
        k: provisions retrieved per query: the question, then each sentence (KoBLEX: 1).
        max_steps: reasoning sentences before the final answer is forced (None: the script's, 8 on vLLM,
            5 on OpenAI).
        official_marker_bug: on the vLLM chat format, look for "So the answer is:" as the released script
            does (so every step runs); False looks for the prompt's "So the final answer is:".
        tokenizer, reranker, prompt_version: as for every multi-hop solver (see `_multihop`).
    """
    require_positive(k=k, max_steps=max_steps)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        run = await MultihopRun.start(state, IRCOT, k, tokenizer, reranker, prompt_version)
        vllm = follows_vllm_script(run)
        marker = VLLM_MARKER if vllm and official_marker_bug else FINAL
        steps = max_steps or MAX_STEPS["vllm" if vllm else "openai"]

        async def sentence_as_query(reply: Completion) -> list[str]:
            if not reply.text:
                run.record.count("empty_sentences")
                return []
            return await run.retrieve(reply.text)

        first = await run.retrieve(run.question)
        reasoning = await interleaved_reasoning(run, first, marker, steps, sentence_as_query)
        run.record.predicted = run.retrieve.keys_of(reasoning.contexts)
        last = reasoning.steps[-1]
        if marker in last and reasoning.last is not None:
            return run.adopt(reasoning.last, AnswerRule("after_marker", (marker,)))
        final = await force_final(run, reasoning, marker, stop=VLLM_FINAL_STOP if vllm else None)
        echo = (last,) if last else ()  # official: drop an echo of the last step before the marker
        return run.adopt(final, AnswerRule("after_marker", (*echo, marker)))

    return solve
