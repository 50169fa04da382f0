"""ProbTree (Cao et al., 2023, "Probabilistic Tree-of-thought Reasoning for Answering Knowledge-intensive
Complex Questions"), as KoBLEX ran it (`experiments/probtree/make_tree_openai.py` and `probtree_openai.py`,
daehuikim/KoBLEX; CA scoring as in `probtree_vllm.py`).

1. Decompose: the model writes a hierarchical question decomposition tree as JSON, `{parent: [children]}`;
   the root is the question (without the background).
2. Answer the nodes children first. For every node, BM25 retrieves the top-k (k = 3) provisions and the model
   answers closed-book (CB) and open-book with those provisions (OB); a non-leaf node also gets a child-
   aggregating answer (CA) from its children's "question answer" lines.
3. Each answer is scored by its mean token log-probability (CA: only the tokens after "So the answer is:");
   the best strategy's answer is the node's answer. The root's answer (after "So the answer is:" when CA won)
   is the final answer; no extra call is made.

`predicted` follows the official `comb`: the top-1 provision of every node whose best strategy is OB (the
released GPT-4o file agrees for 226/226 items). All k provisions of every node are in `retrieved`.

Log-probabilities are required (a provider without them fails the sample; the official script crashed).

Deviations from the official code:
- The published scripts never turn make_tree's `{parent: [children]}` output into the `nodes` list the QA
  script reads (`idx`, `sons`, `parent`, `question_text`, `is_leaf`). We number nodes breadth-first from the
  first key (root = 0, as in the released traces), expand a child that is also a key, never expand a question
  twice, and keep at most `max_tree_nodes`. An unparsable tree becomes a single leaf: the question.
- The OpenAI script located "So the answer is:" by character offset and used it as a token index; we cut at
  the token where the marker ends (what the vLLM script does with its tokenizer).
- Sampling as the answering scripts: max_tokens 4000, temperature 0.0, top_p 0.9 per call unless the run
  sets them; on vLLM also seed 0, logprobs=1 and `enable_thinking=False`. The tree call is the tree stage's
  (vLLM: system + user turns, seed 1, 2048 tokens; OpenAI: one user message, 2000 tokens), identical to the
  recorded official requests; the answering stage cannot be recorded (no released tree converter).
"""

from inspect_ai.solver import Generate, Solver, TaskState, solver

from koblex_tasks.benchmarks.koblex.evidence import AnswerRule
from koblex_tasks.solvers.common import require_positive
from koblex_tasks.solvers.koblex._multihop import (
    MultihopMethod,
    MultihopRun,
    NodeAnswer,
    closed_and_open_book,
    decomposition_tree,
    mean_logprob,
    post_order,
    tokens_after,
)

FINAL = "So the answer is:"
PROBTREE = MultihopMethod(
    "probtree",
    prompt_prefix="probtree",
    prompts=("cb", "cb_system", "ob", "ob_system", "ca", "ca_system", "tree"),
)


@solver
def probtree(
    k: int = 3,
    max_tree_nodes: int = 32,
    tokenizer: str | None = None,
    reranker: str | None = "none",
    prompt_version: str = "v1",
) -> Solver:
    """ProbTree: per tree node, the most confident of closed-book, open-book and child-aggregated answers.

    Args:
        k: provisions retrieved per node, inner nodes included, for its open-book answer (KoBLEX: 3).
        max_tree_nodes: cap on decomposition tree nodes (the official code had none).
        tokenizer, reranker, prompt_version: as for every multi-hop solver (see `_multihop`).
    """
    require_positive(k=k, max_tree_nodes=max_tree_nodes)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        run = await MultihopRun.start(state, PROBTREE, k, tokenizer, reranker, prompt_version)
        nodes = await decomposition_tree(run, max_tree_nodes)
        answers: dict[int, NodeAnswer] = {}
        comb: list[str] = []
        for node in post_order(nodes):
            docs = await run.retrieve(node.question)
            options = await closed_and_open_book(run, node.question, docs)
            if not node.is_leaf:
                context = "".join(f"{nodes[s].question} {answers[s].completion.text}\n" for s in node.sons)
                ca = await run.ask(
                    run.prompts["ca"].render(question=node.question, context=context),
                    system="ca_system",
                    logprobs=True,
                )
                options["ca"] = NodeAnswer("ca", ca, mean_logprob(tokens_after(ca.tokens or [], FINAL)))
            best = max(options.values(), key=lambda a: float("-inf") if a.score is None else a.score)
            if best.strategy == "ob" and docs:
                comb.append(docs[0])
            answers[node.idx] = best
            run.log(
                {
                    "idx": node.idx,
                    "question": node.question,
                    "strategy": best.strategy,
                    "scores": {name: a.score for name, a in options.items()},
                    "retrieved": docs,
                    "answer": best.completion.text,
                }
            )
        run.record.predicted = run.retrieve.keys_of(comb)
        root = answers[0]
        return run.adopt(root.completion, AnswerRule("after_marker", (FINAL,)))

    return solve
