"""FLARE (Jiang et al., 2023, "Active Retrieval Augmented Generation"), as KoBLEX ran it
(`experiments/flare/flare_openai.py`, daehuikim/KoBLEX; log-prob handling also from `flare_qwen.py`).

1. Retrieve the top-k (k = 1) provisions by BM25 for background + question.
2. Reason one sentence per call (stop at . ! ?) with token log-probabilities. If any token of the sentence
   has log-probability below `threshold`, those tokens are masked with "_", the model turns the masked
   sentence into a Korean search question ("New Query:"), and its top-k provisions join the context.
3. At "So the answer is:" the loop ends; after `max_steps` sentences without it, " So the answer is:" is
   appended and one more call (no stop sequence) replaces the last sentence. The answer is the text after
   the marker.

`predicted` is the official `combination_list`: the first query's provisions plus one retrieval per
low-confidence sentence, in order, duplicates kept (the released `comb`).

Threshold (token log-probability; `--token_threshold` in `run_flare.sh`): GPT-4o -0.70 (the default here),
Qwen3 -0.60, EXAONE-3.5 -1.5. `max_steps`: 5 in the OpenAI script, 8 in the Qwen and EXAONE scripts.

Log-probabilities are required: a provider that returns none fails the sample with an error (the official
OpenAI script then silently never retrieved after the first query).

Deviations from the official code:
- The OpenAI script read `logprobs.content[0].tokens`, which OpenAI's response does not have; we use every
  token of the sentence. The Qwen script masked with "" for confident tokens (its query was only "_"s); we
  keep confident tokens, as the OpenAI script and the FLARE paper do.
- The generated query is cut after "New Query:" if the model repeats it (as the Qwen script does).
- Sampling: max_tokens 4000 per call (the official value) unless the run sets max_tokens; temperature
  and top_p 0.9 come from the task (its `chat_format`).
"""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.benchmarks.koblex.evidence import AnswerRule, after_marker
from koblex_tasks.solvers.common import require_positive
from koblex_tasks.solvers.koblex._multihop import (
    Completion,
    MultihopMethod,
    MultihopRun,
    force_final,
    interleaved_reasoning,
)

FINAL = "So the answer is:"
MASK = "_"
FLARE = MultihopMethod("flare", prompt_prefix="flare", prompts=("system", "step", "query"))


def mask_low_confidence(tokens: list[tuple[str, float]], threshold: float) -> tuple[str, bool]:
    """The sentence with every token below `threshold` replaced by "_", and whether any was."""
    masked = [MASK if lp < threshold else token for token, lp in tokens]
    return "".join(masked), any(lp < threshold for _, lp in tokens)


@solver
def flare(
    k: int = 1,
    max_steps: int = 5,
    threshold: float = -0.70,
    tokenizer: str | None = None,
    reranker: str | None = "none",
    prompt_version: str = "v1",
) -> Solver:
    """FLARE: retrieve when a generated sentence contains low-confidence tokens.

    Args:
        k: provisions retrieved per query: the question, then each masked sentence's rewrite (KoBLEX: 1).
        max_steps: reasoning sentences before the final answer is forced (official: 5 for GPT-4o).
        threshold: token log-probability below which a token is uncertain (GPT-4o -0.70, Qwen3 -0.60,
            EXAONE -1.5).
        tokenizer, reranker, prompt_version: as for every multi-hop solver (see `_multihop`).
    """
    require_positive(k=k, max_steps=max_steps)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        run = await MultihopRun.start(state, FLARE, k, tokenizer, reranker, prompt_version)

        async def retrieve_if_uncertain(reply: Completion) -> list[str]:
            masked, uncertain = mask_low_confidence(reply.tokens or [], threshold)
            if not uncertain:
                return []
            rewrite = await run.ask(run.prompts["query"].render(question=run.question, query=masked))
            query = after_marker(rewrite.text, "New Query:")
            run.log({"masked": masked, "query": query})
            run.record.count("active_retrievals")
            return await run.retrieve(query)

        first = await run.retrieve(run.question)
        reasoning = await interleaved_reasoning(
            run, first, FINAL, max_steps, retrieve_if_uncertain, step_logprobs=True
        )
        run.record.predicted = run.retrieve.keys_of(reasoning.contexts)
        last = reasoning.last
        if last is None or FINAL not in last.text:
            last = await force_final(run, reasoning, FINAL)
            reasoning.steps[-1] = last.text  # official: the forced answer replaces the last sentence
        return run.adopt(last, AnswerRule("after_marker", (FINAL, "So the final answer is:")))

    return solve
