"""ParSeR (KoBLEX, Section 4): parametric provision-guided selection retrieval.

1. Parametric provisions: the model writes the statutes it believes apply, as a list of clause texts.
2. Each guess is a BM25 query; the top k (100) paragraphs are reranked by the cross-encoder against the
   question, and the top l (10) become the candidates for that guess.
3. Selection: for each guess the model picks one candidate by its number.
4. Answer: the model answers the question grounded in the selected provisions.

The repository has two versions of the scripts (`benchmarks.koblex.spec.PARSER_SCRIPTS`). The default,
`official_scripts="original"`, is `experiments/parser/original/`, committed with the open-model ParSeR
results: each guess selects from its own candidates, equal rerank scores keep BM25 order, and its prompts
and logprobs. `official_scripts="refactored"` sends what the refactored scripts send (text-ordered ties,
their prompts); `official_selection_bug=True` adds their indexing of the first guess's list for every
guess (`contexts_list[0][choice]`). `koblex conformance` compares both with recordings of the scripts.
A selection reply that is not a shown candidate's number ("③", "²", "٣", "3.", an out-of-range "12", no
reply; with the original scripts also "05") falls back to candidate 0, as in the paper, and is counted
(`selection_fallbacks`); it never fails the sample.

Chat format and limits follow the task's `chat_format` (see `_common`): with the default "system_user" the
three calls send a system and a user turn with max_tokens 4000 / 2048 / 4000 (the official vLLM scripts);
"user" sends one user message with 2000 each (the OpenAI scripts). The completion of the answer call is kept
as written; the scorers read the answer after its last "Answer:".

Ablations (the paper's Table 3 and the equal-budget control; each a named deviation in the protocol record):
`rerank=False` sends BM25's top l to selection; `select=False` takes each query's top-1 candidate without a
selection call; `queries="question"` sends background + question as the query (once, or with
`equal_budget=True` as many times as the model wrote guesses: stage 1 still runs, only to count them). The
evidence records each query's first-stage top k and reranked top l (`first_stage`, `reranked`) and the guesses.
"""

import ast
import json
import logging
import re
from typing import Literal

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import collect

from koblex_tasks.benchmarks.koblex.evidence import OFFICIAL_ANSWER, ProvisionEvidence, after_marker
from koblex_tasks.benchmarks.koblex.spec import PARSER_SCRIPTS
from koblex_tasks.corpus.provision import Provision
from koblex_tasks.corpus.retriever import Hit, Retriever
from koblex_tasks.solvers.common import require_positive, sample_retriever
from koblex_tasks.solvers.koblex._common import (
    SYSTEM_VERSION,
    Generation,
    StagePrompt,
    TieOrder,
    answer_with,
    ask_stage,
    evidence,
    join_provisions,
    official_question,
)

logger = logging.getLogger(__name__)
Queries = Literal["guesses", "question"]
QUERIES: tuple[Queries, ...] = ("guesses", "question")

# The `_system` file versions a template version pairs with, where not `SYSTEM_VERSION` (the original scripts'
# provision and selection system prompts differ from the refactored ones; the answer's is the same).
SYSTEM_FILES: dict[str, dict[str, str]] = {"v3": {"parser_provisions": "v2", "parser_select": "v2"}}


def parse_provision_list(text: str) -> list[str] | None:
    """The first bracketed list in the reply, parsed as JSON, a Python literal, or its quoted items."""
    start = text.find("[")
    if start < 0:
        return None
    depth, end = 0, None
    for i in range(start, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                end = i
                break
    block = text[start : end + 1] if end is not None else text[start:].rstrip(" :;,") + "]"
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(block)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, list):
            return [str(item).strip() for item in value if str(item).strip()]
    quoted = re.findall(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'', block)
    items = [(a or b).strip() for a, b in quoted if (a or b).strip()]
    return items or None


_ASCII_NUMBER = re.compile(r"[0-9]+")
_ASCII_DIGIT = re.compile(r"[0-9]")


def parse_selection(completion: str, n_candidates: int, single_digit: bool = False) -> int | None:
    """The official rule: the text after the last "Answer:" (before a `</think>`) must be a bare number of a
    shown candidate. Only ASCII digits count: `str.isdigit` also accepts "③" or "²", which `int` rejects.
    `single_digit`: the original scripts' `len(answer) == 1` test ("05" is no selection)."""
    answer = after_marker(completion).split("</think>")[0].strip()
    number = _ASCII_DIGIT if single_digit else _ASCII_NUMBER
    if number.fullmatch(answer) and int(answer) < n_candidates:
        return int(answer)
    return None


def format_candidates(hits: list[Hit]) -> str:
    return "\n".join(f"{i}: {h.provision.text}" for i, h in enumerate(hits))


@solver
def parser(
    k: int = 100,
    l: int = 10,  # noqa: E741 - the paper's name
    official_selection_bug: bool = False,
    max_provisions: int | None = None,
    tokenizer: str | None = None,
    reranker: str | None = None,
    prompt_version: str | None = None,
    official_scripts: str = "original",
    rerank: bool = True,
    select: bool = True,
    queries: Queries = "guesses",
    equal_budget: bool = False,
) -> Solver:
    """ParSeR with BM25 top-k, rerank to top-l, one selection per parametric provision.

    Args:
        k: BM25 candidates per parametric provision (paper: 100).
        l: candidates kept after reranking and shown for selection (paper: 10).
        official_selection_bug: select from the first provision's candidates for every provision, as the
            refactored scripts do; False (the paper's protocol, the original scripts): each its own.
        max_provisions: cap on parametric provisions used (None = all, as in the paper).
        tokenizer, reranker: retrieval overrides (see `solvers.common`); reranker "none" keeps BM25 order.
        prompt_version: version of the `parser_*` templates (None: the scripts'; "v3": the original
            scripts', "v2": the refactored scripts', both split from their `_system` files and sent in the
            task's chat format; "v1": the earlier single-file wording, one user message).
        official_scripts: "original" (the paper's protocol) or "refactored": which released scripts'
            prompts, tie order, logprobs and reply rules to follow (`spec.PARSER_SCRIPTS`).
        rerank: rerank BM25's top k (the paper); False: BM25's top l go to selection (Table 3).
        select: let the model select per query (the paper); False: each query's top-1 candidate (Table 3).
        queries: "guesses" (the paper: each parametric provision is a query) or "question" (background +
            question as the query: the one-time-retrieval budget through the same pipeline).
        equal_budget: with queries="question", send it as many times as the model wrote guesses.
    """
    require_positive(k=k, l=l)
    check_switches(queries, equal_budget)
    if official_scripts not in PARSER_SCRIPTS:
        raise ValueError(
            f"official_scripts must be one of {sorted(PARSER_SCRIPTS)}, got {official_scripts!r}"
        )
    scripts = PARSER_SCRIPTS[official_scripts]
    ties: TieOrder = scripts["ties"]

    def load(state: TaskState, name: str) -> StagePrompt:
        """The stage's prompt: the scripts' version for the chat format, unless the run names one."""
        own = scripts["prompt_version"][Generation.of(state).chat_format]
        version = prompt_version or own
        system = SYSTEM_FILES.get(version, {}).get(name, SYSTEM_VERSION)
        return StagePrompt.load(state, name, version, system_version=system)

    def logprobs(state: TaskState, stage: str) -> bool | None:
        """The scripts' logprobs on the vLLM backend; the OpenAI scripts ask for none (the spec's)."""
        return stage in scripts["logprobs"] if Generation.of(state).chat_format == "system_user" else None

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = evidence("parser", uses_retrieval=True, answer_rule=OFFICIAL_ANSWER)
        retriever = await sample_retriever(
            state, tokenizer=tokenizer, reranker=reranker if rerank else "none"
        )
        if retriever.reranker.name == "none":
            state.metadata["parser_note"] = "no reranker: candidates are BM25's top-l (the paper reranks)"

        guesses = await _parametric_provisions(state, record) if queries == "guesses" or equal_budget else []
        budget = len(guesses) if equal_budget else 1
        sent = guesses if queries == "guesses" else [official_question(state)] * budget
        first_stage, candidate_lists = await _candidates(
            retriever, state.metadata["question"], sent, k, l, ties
        )
        record.guesses, record.staged = guesses, True
        record.queries = sent
        record.first_stage = [[h.provision.key for h in hits] for hits in first_stage]
        record.retrieved = [[h.provision.key for h in hits] for hits in candidate_lists]
        record.reranked = record.retrieved
        if select:
            selected = await _select(state, record, candidate_lists)
        else:
            selected = [hits[0].provision for hits in candidate_lists if hits]
        record.predicted = [p.key for p in selected]

        return await answer_with(
            state,
            generate,
            load(state, "parser_answer"),
            logprobs=logprobs(state, "answer"),
            question=official_question(state),
            context_str=join_provisions([p.text for p in selected]),
        )

    async def _parametric_provisions(state: TaskState, record: ProvisionEvidence) -> list[str]:
        reply = await ask_stage(
            state,
            "provisions",
            load(state, "parser_provisions"),
            logprobs=logprobs(state, "provisions"),
            background=state.metadata["background"],
            question=state.metadata["question"],
        )
        guesses = parse_provision_list(reply.completion)
        if guesses is None:
            record.count("provision_list_unparsed")
            state.metadata["parametric_reply"] = reply.completion
            # the original scripts query with the question itself; the refactored ones query nothing
            return [state.metadata["question"]] if scripts["unparsed_as_question"] else []
        if max_provisions is not None:
            guesses = guesses[:max_provisions]
        return guesses

    async def _select(
        state: TaskState, record: ProvisionEvidence, candidate_lists: list[list[Hit]]
    ) -> list[Provision]:
        prompt = load(state, "parser_select")
        shown = [hits for hits in candidate_lists if hits]
        record.count("guesses_without_candidates", len(candidate_lists) - len(shown))
        replies = await collect(
            *[
                ask_stage(
                    state,
                    "selection",
                    prompt,
                    logprobs=logprobs(state, "selection"),
                    background=state.metadata["background"],
                    question=state.metadata["question"],
                    candidates=format_candidates(hits),
                )
                for hits in shown
            ]
        )
        selected: list[Provision] = []
        for hits, reply in zip(shown, replies, strict=True):
            choice = parse_selection(reply.completion, len(hits), scripts["single_digit"])
            if choice is None:
                record.count("selection_fallbacks")
                choice = 0
            pool = shown[0] if official_selection_bug and choice < len(shown[0]) else hits
            selected.append(pool[choice].provision)
        return selected

    return solve


def check_switches(queries: str, equal_budget: bool) -> None:
    """The ablation switches' combinations, when the solver is built (before any model call)."""
    if queries not in QUERIES:
        raise ValueError(f"queries must be one of {list(QUERIES)}, got {queries!r}")
    if equal_budget and queries != "question":
        raise ValueError('equal_budget=True needs queries="question" (ParSeR\'s own queries are its budget)')


async def _candidates(
    retriever: Retriever,
    question: str,
    guesses: list[str],
    k: int,
    l: int,  # noqa: E741
    ties: TieOrder,
) -> tuple[list[list[Hit]], list[list[Hit]]]:
    """BM25 top-k per guess, and its rerank against the question to top-l, both as the official code does."""
    candidates = await retriever.aretrieve_many(guesses, k, top=l, rerank_query=question, ties=ties)
    return [list(r.first_stage) for r in candidates], [list(r.returned) for r in candidates]
