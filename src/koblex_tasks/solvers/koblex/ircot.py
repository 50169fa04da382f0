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
- vLLM ("system_user"): looks for "So the answer is:", 8 steps, the forced call appends " So the answer is:".

Where the released script and the released traces (`results/ircot_qwen_32b.jsonl`, `ircot_exaone_32b.jsonl`,
`ircot_gpt4o.jsonl`) disagree, the traces win, since they made the paper's numbers; each script behaviour is a
switch:
- The vLLM traces' models wrote "So the answer is:" (226/226 rows of both files; none holds "So the final
  answer is:") and stopped after 2-8 steps, so their system prompt asked for that marker: `ircot_system.v2`
  (the FLARE script's wording). The script's prompt asks for "So the final answer is:", which its loop never
  finds (every step runs): `script_prompt=True`.
- The forced final call was not cut at "\n" (EXAONE-3.5-32B: 72/72 forced rows continue after it); the
  script stops it there: `script_final_stop=True`.
- Every sentence keeps the punctuation that ended it in the next prompt ("...해당한다. 절도죄는 ..."), on both
  backends; the scripts' servers drop the stop string: `script_drops_punctuation=True`.
`official_marker_bug=False` looks for "So the final answer is:" on vLLM too (with `script_prompt=True`: what
the script's prompt asks for).

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
from koblex_tasks.solvers.koblex._common import koblex_prompt
from koblex_tasks.solvers.koblex._multihop import (
    FORCED_SEPARATOR,
    SCRIPT_FORCED_SEPARATOR,
    Completion,
    MultihopMethod,
    MultihopRun,
    StepRules,
    follows_vllm_script,
    force_final,
    interleaved_reasoning,
)

FINAL = "So the final answer is:"  # what the OpenAI script's system prompt asks for
VLLM_MARKER = "So the answer is:"  # what the vLLM script looks for and appends, and the traces show
MAX_STEPS = {"vllm": 8, "openai": 5}
VLLM_FINAL_STOP = ["\n"]
TRACED_SYSTEM_VERSION = "v2"  # the system prompt asking for "So the answer is:" (the vLLM traces)
IRCOT = MultihopMethod("ircot", prompt_prefix="ircot", prompts=("system", "step"))


@solver
def ircot(
    k: int = 1,
    max_steps: int | None = None,
    official_marker_bug: bool = True,
    script_prompt: bool = False,
    script_final_stop: bool = False,
    script_drops_punctuation: bool = False,
    script_final_prompt: bool = False,
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
            does; False looks for "So the final answer is:".
        script_prompt: on vLLM, send the script's system prompt ("So the final answer is:") instead of the
            one the traces show ("So the answer is:").
        script_final_stop: on vLLM, cut the forced final call at "\n" as the script does.
        script_drops_punctuation: drop each sentence's final punctuation (the stop string) as the scripts'
            servers do; the traces keep it.
        script_final_prompt: the forced final prompt appends " <marker>" as the scripts' code does (the
            traces: "\n <marker>", every forced row of both backends).
        tokenizer, reranker, prompt_version: as for every multi-hop solver (see `_multihop`).
    """
    require_positive(k=k, max_steps=max_steps)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        run = await MultihopRun.start(state, IRCOT, k, tokenizer, reranker, prompt_version)
        vllm = follows_vllm_script(run)
        if vllm and not script_prompt:
            run.prompts["system"] = koblex_prompt(state, "ircot_system", TRACED_SYSTEM_VERSION)
        marker = VLLM_MARKER if vllm and official_marker_bug else FINAL
        steps = max_steps or MAX_STEPS["vllm" if vllm else "openai"]

        async def sentence_as_query(reply: Completion) -> list[str]:
            if not reply.text:
                run.record.count("empty_sentences")
                return []
            return await run.retrieve(reply.text)

        first = await run.retrieve(run.question)
        rules = StepRules(keep_stop=not script_drops_punctuation)
        reasoning = await interleaved_reasoning(run, first, marker, steps, sentence_as_query, rules=rules)
        run.record.predicted = run.retrieve.keys_of(reasoning.contexts)
        last = reasoning.steps[-1]
        if marker in last and reasoning.last is not None:
            return run.adopt(reasoning.last, AnswerRule("after_marker", (marker,)))
        final_stop = VLLM_FINAL_STOP if vllm and script_final_stop else None
        separator = SCRIPT_FORCED_SEPARATOR if script_final_prompt else FORCED_SEPARATOR
        final = await force_final(run, reasoning, marker, stop=final_stop, separator=separator)
        # the OpenAI script drops an echo of the last step before the marker; the vLLM script reads after the
        # last marker only (the traces: a forced reply that ends with the last step keeps its answer)
        echo = (last,) if last and not vllm else ()
        return run.adopt(final, AnswerRule("after_marker", (*echo, marker)))

    return solve
