"""Helpers shared by the multi-hop baselines: Self-Ask, IRCoT, FLARE, ProbTree and BeamAggr.

What the five official scripts (github.com/daehuikim/KoBLEX, `experiments/`) have in common lives here:
chat calls with the method's system prompt and client-side stop sequences, BM25 retrieval recorded in the
`ProvisionEvidence` record, token log-probabilities, the IRCoT/FLARE interleaved reasoning loop, and the
question decomposition tree of ProbTree and BeamAggr.

The final output is the model's reply exactly as written (`MultihopRun.adopt`); the method's answer
extraction (after its marker, Self-Ask's last line, client-side stop sequences included) is recorded as the
sample's `AnswerRule` and applied by the scorers. Only BeamAggr, whose answer joins several replies,
composes its output (`MultihopRun.compose`, scored as written).

Every multi-hop solver also takes `tokenizer` and `reranker`, the retrieval overrides of `solvers.common`
(`reranker` defaults to "none": the official baselines used BM25 alone; None takes the task's), and `prompt_version`, the version of its prompt files. A sample's run
starts with `MultihopRun.start`, which records the evidence, the retrieval and the method's prompts.
"""

import ast
import json
import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import TaskState

from koblex_tasks._inspect_compat import run_generate_config
from koblex_tasks.benchmarks.koblex.evidence import AnswerRule, ProvisionEvidence, cut_at_stop
from koblex_tasks.corpus.retriever import Retriever
from koblex_tasks.prompts import Prompt
from koblex_tasks.solvers.common import sample_retriever
from koblex_tasks.solvers.koblex._common import (
    Generation,
    StagePrompt,
    evidence,
    koblex_prompt,
    official_question,
    stage_config,
    top_provisions,
)

SENTENCE_STOPS = [".", "!", "?"]  # the official ST_STOP: one reasoning sentence per call
# vLLM's sampling parameter that keeps the matched stop string in the reply (OpenAI has none: cut client-side).
VLLM_KEEP_STOP = {"include_stop_str_in_output": True}
# The tree prompt split into system text and template (v1 is both in one text: the OpenAI scripts' message),
# sent in the task's chat format: system + user turns for the vLLM scripts, their "\n\n" join otherwise.
TREE_VERSION = "v2"
LOGPROBS_PROVIDERS = "openai, openai-api/*, vllm, sglang, hf, together, grok or google"


class LogprobsUnavailableError(RuntimeError):
    """The provider returned no token log-probabilities, which the method needs to decide."""

    def __init__(self, method: str, model: str) -> None:
        super().__init__(
            f"{method} needs token log-probabilities, but model {model!r} returned none. Run it with a "
            f"provider that returns logprobs ({LOGPROBS_PROVIDERS}; not anthropic, and not OpenAI reasoning "
            "models)."
        )


@dataclass
class Completion:
    """One model reply: its text (cut at the first stop sequence, stripped) and per-token log-probs."""

    messages: list[ChatMessage]
    output: ModelOutput
    text: str
    tokens: list[tuple[str, float]] | None = None  # (token, logprob) for the kept text, if requested
    stops: tuple[str, ...] = ()  # the client-side stop sequences `text` was cut at
    keep_stop: bool = False  # the stop sequence that ended `text` is part of it

    @property
    def cut(self) -> str:
        """The reply cut at its stop sequence, not stripped: what a vLLM script's `_generate` returns."""
        return cut_at_stop(self.output.completion, self.stops, keep=self.keep_stop)


async def complete(
    method: str,
    messages: list[ChatMessage],
    config: GenerateConfig,
    stop: list[str] | None = None,
    logprobs: bool = False,
    keep_stop: bool = False,
    server_stop: bool = True,
) -> Completion:
    """One intermediate call with the stage's settings (`config`), client-side stop sequences and logprobs.

    Logprobs as the scripts ask: vLLM's `logprobs=1` (one alternative) under the vLLM chat format, the
    OpenAI flag alone otherwise. `keep_stop`: the reply keeps the stop sequence that ended it;
    `server_stop` False sends no stop sequences (the cut is then client-side only).
    """
    config = config.merge(GenerateConfig(stop_seqs=(stop or None) if server_stop else None))
    if logprobs and not config.logprobs:
        config = config.merge(GenerateConfig(logprobs=True))
    model = get_model()
    output = await model.generate(messages, config=config)
    raw = output.completion
    kept = cut_at_stop(raw, stop, keep=keep_stop)
    tokens = None
    if logprobs:
        choice_lps = output.choices[0].logprobs if output.choices else None
        if choice_lps is None:
            raise LogprobsUnavailableError(method, str(model))
        tokens, length = [], 0
        for lp in choice_lps.content:
            if kept != raw and length >= len(kept):
                break  # tokens past a client-side stop are not part of the reply
            tokens.append((lp.token, lp.logprob))
            length += len(lp.token)
    return Completion(messages, output, kept.strip(), tokens, tuple(stop or ()), keep_stop)


def mean_logprob(tokens: list[tuple[str, float]] | None) -> float | None:
    """Average token log-probability (the official `avg_logprob`); None when there are no tokens."""
    return sum(lp for _, lp in tokens) / len(tokens) if tokens else None


def tokens_after(tokens: list[tuple[str, float]], marker: str) -> list[tuple[str, float]]:
    """The tokens after the first `marker` in their concatenated text (all tokens if it never appears)."""
    text = ""
    for i, (token, _) in enumerate(tokens):
        text += token
        if marker in text:
            return tokens[i + 1 :]
    return tokens


def softmax(scores: dict[str, float | None]) -> dict[str, float]:
    """Normalised exp(score); a missing score gets probability 0 (uniform if all are missing)."""
    finite = {k: v for k, v in scores.items() if v is not None}
    if not finite:
        return {k: 1 / len(scores) for k in scores}
    top = max(finite.values())
    exps = {k: math.exp(v - top) if v is not None else 0.0 for k, v in scores.items()}
    total = sum(exps.values())
    return {k: e / total for k, e in exps.items()}


class RecordedRetrieval:
    """BM25 top-k (reranked when the task has a reranker) whose queries and results go to the evidence.

    A call returns the provisions' texts, which the methods put into their prompts and lists; the evidence
    records their keys, and `keys_of` maps the texts a method relied on back to keys for `predicted` (a text
    names one provision: the corpus keeps one provision per text).
    """

    def __init__(self, retriever: Retriever, record: ProvisionEvidence, k: int) -> None:
        if k < 1:
            raise ValueError(f"k must be positive, got {k}")
        self.retriever, self.record, self.k = retriever, record, k
        self._keys: dict[str, str] = {}  # text -> key of every provision returned so far

    @classmethod
    async def start(
        cls, state: TaskState, method: str, k: int, tokenizer: str | None, reranker: str | None
    ) -> "RecordedRetrieval":
        """The sample's evidence record for `method` and a retrieval that writes into it."""
        record = evidence(method, uses_retrieval=True)
        return cls(await sample_retriever(state, tokenizer=tokenizer, reranker=reranker), record, k)

    async def __call__(self, query: str) -> list[str]:
        provisions = await top_provisions(self.retriever, query, self.k, rerank_against=query)
        self._keys.update((p.text, p.key) for p in provisions)
        self.record.queries = [*self.record.queries, query]
        self.record.retrieved = [*self.record.retrieved, [p.key for p in provisions]]
        return [p.text for p in provisions]

    def keys_of(self, texts: list[str]) -> list[str]:
        """The keys of provisions this retrieval returned, given their texts (order and repeats kept)."""
        return [self._keys[text] for text in texts]


@dataclass(frozen=True)
class MultihopMethod:
    """A method's name (its evidence and `<name>_trace`) and its prompt files `koblex/<prefix>_<prompt>`."""

    name: str
    prompt_prefix: str
    prompts: tuple[str, ...]  # loaded, and so recorded, in this order
    max_tokens: int = 4000  # per call, the official scripts' (Self-Ask: 2000)
    stage: str = "reasoning"  # the spec's GENERATION stage of its calls (seed, temperature per chat format)


@dataclass
class MultihopRun:
    """One sample's run of a multi-hop method: the recorded retrieval, the question and the method's prompts."""

    state: TaskState
    method: str
    retrieve: RecordedRetrieval
    question: str  # background + question, as the official scripts join them
    prompts: dict[str, Prompt]  # by the name after the method's prefix: "system", "step", "cb", ...
    max_tokens: int = 4000
    stage: str = "reasoning"

    @classmethod
    async def start(
        cls,
        state: TaskState,
        method: MultihopMethod,
        k: int,
        tokenizer: str | None,
        reranker: str | None,
        prompt_version: str,
    ) -> "MultihopRun":
        """Stamp the evidence record, get the sample's retriever, record the method's prompts."""
        retrieve = await RecordedRetrieval.start(state, method.name, k, tokenizer, reranker)
        prompts = {
            name: koblex_prompt(state, f"{method.prompt_prefix}_{name}", prompt_version)
            for name in method.prompts
        }
        question = official_question(state)
        return cls(state, method.name, retrieve, question, prompts, method.max_tokens, method.stage)

    @property
    def record(self) -> ProvisionEvidence:
        return self.retrieve.record

    async def ask(
        self,
        user: str,
        system: str | None = "system",
        stop: list[str] | None = None,
        logprobs: bool = False,
        keep_stop: bool = False,
    ) -> Completion:
        """One call of the method's stage with the method prompt named `system` as system text (None: no
        system turn)."""
        messages: list[ChatMessage] = [ChatMessageUser(content=user)]
        if system:
            messages.insert(0, ChatMessageSystem(content=self.prompts[system].text))
        return await self.send(messages, self.stage, stop=stop, logprobs=logprobs, keep_stop=keep_stop)

    async def send(
        self,
        messages: list[ChatMessage],
        stage: str,
        stop: list[str] | None = None,
        logprobs: bool = False,
        keep_stop: bool = False,
    ) -> Completion:
        """One call of `stage` (its max_tokens, seed, template arguments and temperature for the chat format).

        `keep_stop` (the released traces' sentences keep their final punctuation): on vLLM the server is asked
        to keep the stop string (`include_stop_str_in_output`); OpenAI cannot, so no stop is sent and the
        reply is cut client-side after it.
        """
        generation = Generation.of(self.state)
        chat_format = generation.chat_format
        limit = self.max_tokens if stage == self.stage else generation.max_tokens.get(stage)
        config = stage_config(chat_format, stage, limit)
        if logprobs and chat_format == "system_user":
            config = config.merge(GenerateConfig(logprobs=True, top_logprobs=1))  # vLLM's logprobs=1
        vllm_keeps = bool(stop) and keep_stop and chat_format == "system_user"
        if vllm_keeps:
            extra = config.extra_body or run_generate_config(get_model()).extra_body or {}
            config = config.merge(GenerateConfig(extra_body={**extra, **VLLM_KEEP_STOP}))
        return await complete(
            self.method,
            messages,
            config,
            stop=stop,
            logprobs=logprobs,
            keep_stop=keep_stop,
            server_stop=vllm_keeps or not keep_stop,
        )

    def log(self, step: dict[str, Any]) -> None:
        """Append one intermediate step to `metadata[<method>_trace]` and show it in the transcript."""
        key = f"{self.method}_trace"
        self.state.metadata[key] = [*self.state.metadata.get(key, []), step]
        transcript().info({self.method: step}, source=self.method)

    def adopt(self, completion: Completion, rule: AnswerRule) -> TaskState:
        """Make an intermediate call the sample's final output, as the model wrote it (no extra call).

        `rule` is how the scorers read the answer from it; the call's stop sequences are added to it.
        """
        self.record.answer_rule = replace(
            rule, stops=completion.stops, keep_stop=completion.keep_stop
        ).as_dict()
        output = completion.output.model_copy(deep=True)
        self.state.messages = [*completion.messages, ChatMessageAssistant(content=output.completion)]
        self.state.output = output
        return self.state

    def compose(self, answer: str) -> TaskState:
        """Final output for an answer assembled from several calls (no single reply holds it; scored whole)."""
        self.record.answer_rule = AnswerRule().as_dict()
        self.state.messages = [*self.state.messages[:1], ChatMessageAssistant(content=answer)]
        self.state.output = ModelOutput.from_content(model=get_model().name, content=answer)
        return self.state


# --- IRCoT / FLARE: one reasoning sentence per call, retrieval between sentences -------------------------


@dataclass
class Reasoning:
    contexts: list[str]  # the official `combination_list`: every provision retrieved, in order
    steps: list[str] = field(default_factory=list)  # the official `reasoning_list`
    last: Completion | None = None
    question_prefix: str = ""  # put before the question in the step prompt (FLARE's traces: "Question: ")


def step_prompt(run: MultihopRun, reasoning: Reasoning) -> str:
    """The method's step prompt: every provision so far, the question, the sentences so far."""
    return run.prompts["step"].render(
        context="\n".join(reasoning.contexts),
        question=reasoning.question_prefix + run.question,
        reasoning=" ".join(reasoning.steps),
    )


@dataclass(frozen=True)
class StepRules:
    """How the sentence loop runs: which of the released traces' behaviours (the defaults) it follows."""

    stop_at_marker: bool = True  # False: keep reasoning after the marker (FLARE's traces)
    keep_stop: bool = True  # each sentence keeps the punctuation that ended it (both methods' traces)
    question_prefix: str = ""


async def interleaved_reasoning(
    run: MultihopRun,
    first_contexts: list[str],
    marker: str,
    max_steps: int,
    next_contexts: Callable[[Completion], Awaitable[list[str]]],
    step_logprobs: bool = False,
    step_system: str | None = "system",
    rules: StepRules | None = None,
) -> Reasoning:
    """Generate sentence by sentence until `marker` appears (unless `rules` say go on) or `max_steps` run out.

    After every sentence without the marker, `next_contexts` may retrieve more provisions; they are appended
    to the context of the next call. `step_system` None sends the step prompt alone (FLARE's vLLM script).
    """
    rules = rules or StepRules()
    reasoning = Reasoning(contexts=list(first_contexts), question_prefix=rules.question_prefix)
    for step in range(max_steps):
        reply = await run.ask(
            step_prompt(run, reasoning),
            system=step_system,
            stop=SENTENCE_STOPS,
            logprobs=step_logprobs,
            keep_stop=rules.keep_stop,
        )
        reasoning.steps.append(reply.text)
        reasoning.last = reply
        if marker in reply.text and rules.stop_at_marker:
            run.log({"step": step, "sentence": reply.text, "final": True})
            break
        added = await next_contexts(reply)
        reasoning.contexts.extend(added)
        run.log({"step": step, "sentence": reply.text, "retrieved": added})
    return reasoning


FORCED_SEPARATOR = "\n "  # the traces' forced prompt: "<sentences>\n So the answer is:"
SCRIPT_FORCED_SEPARATOR = " "  # the scripts': "<sentences> So the answer is:"


async def force_final(
    run: MultihopRun,
    reasoning: Reasoning,
    marker: str,
    stop: list[str] | None = None,
    separator: str = FORCED_SEPARATOR,
) -> Completion:
    """Append `separator` and `marker` to the reasoning so far and ask once more (counted); `stop`: the
    script's, if any. The released traces (IRCoT on both backends, FLARE on vLLM: every forced row) show
    "\n " before the marker; the scripts' code appends " " (`SCRIPT_FORCED_SEPARATOR`)."""
    run.record.count("forced_final_answer")
    return await run.ask(f"{step_prompt(run, reasoning)}{separator}{marker}", stop=stop)


def follows_vllm_script(run: MultihopRun) -> bool:
    """The run's chat format is the vLLM scripts' (Qwen3, EXAONE rows), not the OpenAI scripts' (GPT-4o)."""
    return Generation.of(run.state).chat_format == "system_user"


# --- ProbTree / BeamAggr: hierarchical question decomposition tree --------------------------------------


@dataclass
class TreeNode:
    idx: int
    question: str
    parent: int | None
    sons: list[int] = field(default_factory=list)

    @property
    def is_leaf(self) -> bool:
        return not self.sons


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first balanced `{...}` in the reply (code fences removed), as JSON or a Python literal."""
    clean = re.sub(r"```(?:json)?\n?|```", "", text)
    start = clean.find("{")
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(clean)):
        depth += {"{": 1, "}": -1}.get(clean[i], 0)
        if depth == 0:
            block = clean[start : i + 1]
            break
    else:
        return None
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(block)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        return value if isinstance(value, dict) else None
    return None


def build_tree(
    decomposition: dict[str, Any] | None, fallback_question: str, max_nodes: int, forest: bool = False
) -> list[TreeNode]:
    """Nodes of the `{parent: [children]}` tree, root first, numbered breadth-first (root = 0).

    The root is the first key; a child that is itself a key gets that key's children. Repeated questions
    (cycles) are not expanded twice and at most `max_nodes` nodes are kept. Without a usable tree the root
    alone is the question (answered as a leaf). `forest`: every other key that is no key's child is a root
    too (`parent` None, after the first tree), as the official scripts' `root_idxs`.
    """
    items = {
        str(k).strip(): [str(c).strip() for c in v if str(c).strip()]
        for k, v in (decomposition or {}).items()
        if isinstance(v, list) and str(k).strip()
    }
    if not items:
        return [TreeNode(0, fallback_question, None)]
    children = {c for sons in items.values() for c in sons}
    roots = [k for k in items if k not in children] if forest else []
    nodes: list[TreeNode] = []
    expanded: set[str] = set()
    for root in [next(iter(items)), *roots]:
        if root in expanded or len(nodes) >= max_nodes:
            continue
        nodes.append(TreeNode(len(nodes), root, None))
        frontier = [len(nodes) - 1]
        while frontier:
            node = nodes[frontier.pop(0)]
            if node.question in expanded:
                continue
            expanded.add(node.question)
            for child in items.get(node.question, []):
                if len(nodes) >= max_nodes:
                    return nodes
                nodes.append(TreeNode(len(nodes), child, node.idx))
                node.sons.append(len(nodes) - 1)
                frontier.append(len(nodes) - 1)
    return nodes


def roots(nodes: list[TreeNode]) -> list[int]:
    """The trees' roots in order (node 0 first)."""
    return [n.idx for n in nodes if n.parent is None]


def post_order(nodes: list[TreeNode], root: int = 0) -> list[TreeNode]:
    """Children before parents, left to right (the official recursive `post_order` from the root)."""
    order: list[TreeNode] = []
    stack: list[tuple[int, bool]] = [(root, False)]
    while stack:
        idx, done = stack.pop()
        if done:
            order.append(nodes[idx])
            continue
        stack.append((idx, True))
        stack.extend((son, False) for son in reversed(nodes[idx].sons))
    return order


async def decomposition_tree(run: MultihopRun, max_nodes: int, forest: bool = False) -> list[TreeNode]:
    """Ask for the tree as the tree scripts do: system + user turns on vLLM (seed 1, logprobs=1, max_tokens
    2048), one user message with the system text prepended on OpenAI (max_tokens 2000)."""
    state, method = run.state, run.method
    prompt = StagePrompt(
        koblex_prompt(state, "tree", TREE_VERSION), koblex_prompt(state, "tree_system", "v1")
    )
    messages = prompt.messages(
        Generation.of(state).chat_format,
        background=state.metadata["background"],
        question=state.metadata["question"],
    )
    reply = await run.send(messages, "tree", logprobs=Generation.of(state).chat_format == "system_user")
    decomposition = parse_json_object(reply.text)
    if decomposition is None:
        run.record.count("tree_unparsed")
        state.metadata[f"{method}_tree_reply"] = reply.text
    nodes = build_tree(decomposition, state.metadata["question"], max_nodes, forest)
    state.metadata[f"{method}_tree"] = [
        {"idx": n.idx, "question": n.question, "parent": n.parent, "sons": n.sons} for n in nodes
    ]
    transcript().info({"tree": state.metadata[f"{method}_tree"]}, source=method)
    return nodes


Strategy = Literal["cb", "ob", "ca"]


@dataclass
class NodeAnswer:
    strategy: Strategy
    completion: Completion
    score: float | None  # mean token log-probability of the scored part


async def closed_and_open_book(
    run: MultihopRun, question: str, docs: list[str]
) -> dict[Strategy, NodeAnswer]:
    """CB (no context) and OB (the retrieved provisions as context) answers to one node, with scores.

    Uses the method's cb, cb_system, ob and ob_system prompts. Logprobs are requested; none is an error.
    """
    cb = await run.ask(run.prompts["cb"].render(question=question), system="cb_system", logprobs=True)
    ob = await run.ask(
        run.prompts["ob"].render(question=question, context="\n".join(docs)),
        system="ob_system",
        logprobs=True,
    )
    return {
        "cb": NodeAnswer("cb", cb, mean_logprob(cb.tokens)),
        "ob": NodeAnswer("ob", ob, mean_logprob(ob.tokens)),
    }
