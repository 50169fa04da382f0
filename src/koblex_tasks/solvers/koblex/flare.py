"""FLARE (Jiang et al., 2023, "Active Retrieval Augmented Generation"), as KoBLEX ran it
(`experiments/flare/flare_openai.py` and `flare_qwen.py`, daehuikim/KoBLEX).

1. Retrieve the top-k (k = 1) provisions by BM25 for background + question.
2. Reason one sentence per call (stop at . ! ?) with token log-probabilities. If any token of the sentence
   has log-probability below the threshold, those tokens are masked with "_", the model turns the masked
   sentence into a Korean search question ("New Query:"), and its top-k provisions join the context.
3. After `max_steps` sentences (the scripts: at the first "So the answer is:"), if the last lacks the marker, " So the answer is:" is
   appended and one more call (no stop sequence) replaces the last sentence. The answer is the text after
   the marker.

`predicted` is the official `combination_list`: the first query's provisions plus one retrieval per
low-confidence sentence, in order, duplicates kept (the released `comb`).

The two scripts differ, and the task's `chat_format` picks which one runs (the paper's protocol for each):
- OpenAI ("user"): step and query calls send the system prompt; the masked sentence keeps its confident
  tokens; the generated reply is the query as written; 5 steps; threshold -0.70.
- vLLM ("system_user"): step calls send no system prompt; every call asks for logprobs=1; confident tokens
  are dropped from the masked sentence (the query shows only "_"s); the query is cut after "New Query:";
  8 steps; threshold -0.60.
Both scripts use their default threshold whatever `--token_threshold` says (`run_flare.sh` passes -1.5 for
EXAONE): a bug the paper's protocol keeps; `official_threshold_bug=False` uses `threshold`. Dropping
confident tokens on vLLM is kept likewise; `official_mask_bug=False` keeps them, as the FLARE paper does.

Where the released scripts and the released traces (`results/flare_*.jsonl`) disagree, the traces win, since
they made the paper's numbers; each script behaviour is a switch:
- On OpenAI (GPT-4o) the run does not end at the first "So the answer is:": the traces retrieve again after
  it in 153 of 218 parsable rows and all reach 5 steps; the loop runs `max_steps` sentences and forces the
  final answer only when the last one lacks the marker. `script_stops_at_marker=True` ends at the first
  marker. The vLLM traces end at it (2-8 steps, one marker), as the script does.
- Every step prompt of every trace (both backends) reads "Question: Question: <question>"; the scripts send
  "Question:" once: `script_question_once=True`.
- Every sentence keeps the punctuation that ended it in the next prompt (as IRCoT's traces); the scripts'
  servers drop it: `script_drops_punctuation=True`.

Log-probabilities are required: a provider that returns none fails the sample with an error (the official
OpenAI script then silently never retrieved after the first query).

Deviations from the official code:
- The OpenAI script read `logprobs.content[0].tokens`, which OpenAI's response does not have; we use every
  token of the sentence (the smallest fix, as the recorded fixtures did).
- Sampling: max_tokens 4000, temperature 0.0, top_p 0.9 per call unless the run sets them.
"""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.benchmarks.koblex.evidence import AnswerRule, after_marker
from koblex_tasks.solvers.common import require_positive
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

FINAL = "So the answer is:"
MASK = "_"
TRACED_QUESTION_PREFIX = "Question: "  # the traces' step prompt: "Question: Question: <question>"
QUERY_MARKER = "New Query:"
SCRIPT_THRESHOLD = {"vllm": -0.60, "openai": -0.70}  # the scripts' defaults, used whatever the flag says
MAX_STEPS = {"vllm": 8, "openai": 5}
FLARE = MultihopMethod("flare", prompt_prefix="flare", prompts=("system", "step", "query"))


def mask_low_confidence(
    tokens: list[tuple[str, float]], threshold: float, keep_confident: bool = True
) -> tuple[str, bool]:
    """The sentence with every token below `threshold` replaced by "_" (the confident ones kept, or dropped
    as the vLLM script does), and whether any was below."""
    masked = [MASK if lp < threshold else token if keep_confident else "" for token, lp in tokens]
    return "".join(masked), any(lp < threshold for _, lp in tokens)


@solver
def flare(
    k: int = 1,
    max_steps: int | None = None,
    threshold: float | None = None,
    official_threshold_bug: bool = True,
    official_mask_bug: bool = True,
    script_stops_at_marker: bool = False,
    script_question_once: bool = False,
    script_drops_punctuation: bool = False,
    script_final_prompt: bool = False,
    tokenizer: str | None = None,
    reranker: str | None = "none",
    prompt_version: str = "v1",
) -> Solver:
    """FLARE: retrieve when a generated sentence contains low-confidence tokens.

    Args:
        k: provisions retrieved per query: the question, then each masked sentence's rewrite (KoBLEX: 1).
        max_steps: reasoning sentences before the final answer is forced (None: the script's, 8 on vLLM,
            5 on OpenAI).
        threshold: token log-probability below which a token is uncertain (None: the script's default,
            -0.60 on vLLM, -0.70 on OpenAI); used only with `official_threshold_bug=False`.
        official_threshold_bug: use the script's default threshold whatever `threshold` says, as both
            released scripts do.
        official_mask_bug: on the vLLM chat format, drop confident tokens from the masked sentence, as the
            released script does.
        script_stops_at_marker: on OpenAI, end at the first "So the answer is:" as the script does (the
            GPT-4o traces go on; on vLLM the run always ends there, as script and traces do).
        script_question_once: "Question:" once in the step prompt, as the scripts send it (the traces: twice).
        script_drops_punctuation: drop each sentence's final punctuation, as the scripts' servers do.
        script_final_prompt: the forced final prompt appends " <marker>" as the scripts' code does (the
            traces: "\n <marker>", every forced row of both backends).
        tokenizer, reranker, prompt_version: as for every multi-hop solver (see `_multihop`).
    """
    require_positive(k=k, max_steps=max_steps)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        run = await MultihopRun.start(state, FLARE, k, tokenizer, reranker, prompt_version)
        script = "vllm" if follows_vllm_script(run) else "openai"
        vllm = script == "vllm"
        limit = SCRIPT_THRESHOLD[script] if official_threshold_bug or threshold is None else threshold
        keep_confident = not (vllm and official_mask_bug)

        async def retrieve_if_uncertain(reply: Completion) -> list[str]:
            masked, uncertain = mask_low_confidence(reply.tokens or [], limit, keep_confident)
            if not uncertain:
                return []
            rewrite = await run.ask(
                run.prompts["query"].render(question=run.question, query=masked), logprobs=vllm
            )
            query = after_marker(rewrite.text, QUERY_MARKER) if vllm else rewrite.text
            run.log({"masked": masked, "query": query})
            run.record.count("active_retrievals")
            return await run.retrieve(query)

        first = await run.retrieve(run.question)
        reasoning = await interleaved_reasoning(
            run,
            first,
            FINAL,
            max_steps or MAX_STEPS[script],
            retrieve_if_uncertain,
            step_logprobs=True,
            step_system=None if vllm else "system",
            rules=StepRules(
                stop_at_marker=script_stops_at_marker or vllm,
                keep_stop=not script_drops_punctuation,
                question_prefix="" if script_question_once else TRACED_QUESTION_PREFIX,
            ),
        )
        run.record.predicted = run.retrieve.keys_of(reasoning.contexts)
        last = reasoning.last
        if last is None or FINAL not in last.text:
            separator = SCRIPT_FORCED_SEPARATOR if script_final_prompt else FORCED_SEPARATOR
            last = await force_final(run, reasoning, FINAL, separator=separator)
            reasoning.steps[-1] = last.text  # official: the forced answer replaces the last sentence
        return run.adopt(last, AnswerRule("after_marker", (FINAL, "So the final answer is:")))

    return solve
