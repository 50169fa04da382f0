"""ParSeR (KoBLEX, Section 4): parametric provision-guided selection retrieval.

1. Parametric provisions: the model writes the statutes it believes apply, as a list of clause texts.
2. Each guess is a BM25 query; the top k (100) paragraphs are reranked by the cross-encoder against the
   question, and the top l (10) become the candidates for that guess.
3. Selection: for each guess the model picks one candidate by its number.
4. Answer: the model answers the question grounded in the selected provisions.

The official selection step indexed the first guess's candidate list for every guess
(`contexts_list[0][choice]`); we use each guess's own list. `official_selection_bug=True` restores the
released behaviour for reproduction. A selection reply that is not a valid number falls back to candidate 0,
as in the paper, and is counted (`selection_fallbacks`).
"""

import ast
import json
import logging
import re

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import collect

from koblex_tasks.corpus.retriever import Hit, Retriever
from koblex_tasks.solvers.common import ask, require_positive, sample_retriever
from koblex_tasks.solvers.koblex._common import (
    answer_after_marker,
    answer_with_prompt,
    evidence,
    join_provisions,
    koblex_prompt,
    official_question,
)
from koblex_tasks.tasks.koblex.evidence import ProvisionEvidence

logger = logging.getLogger(__name__)


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


def parse_selection(completion: str, n_candidates: int) -> int | None:
    """The official rule: the text after the last "Answer:" must be a bare number of a candidate."""
    answer = answer_after_marker(completion)
    if answer.isdigit() and int(answer) < n_candidates:
        return int(answer)
    return None


def format_candidates(hits: list[Hit]) -> str:
    return "\n".join(f"{i}: {h.provision.key}" for i, h in enumerate(hits))


@solver
def parser(
    k: int = 100,
    l: int = 10,  # noqa: E741 - the paper's name
    official_selection_bug: bool = False,
    max_provisions: int | None = None,
    tokenizer: str | None = None,
    reranker: str | None = None,
    prompt_version: str = "v1",
) -> Solver:
    """ParSeR with BM25 top-k, rerank to top-l, one selection per parametric provision.

    Args:
        k: BM25 candidates per parametric provision (paper: 100).
        l: candidates kept after reranking and shown for selection (paper: 10).
        official_selection_bug: select from the first provision's candidates for every provision, as the
            released code did.
        max_provisions: cap on parametric provisions used (None = all, as in the paper).
        tokenizer, reranker: retrieval overrides (see `solvers.common`); reranker "none" keeps BM25 order.
        prompt_version: version of the `parser_*` prompt files.
    """
    require_positive(k=k, l=l)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = evidence("parser", uses_retrieval=True)
        retriever = await sample_retriever(state, tokenizer=tokenizer, reranker=reranker)
        if retriever.reranker.name == "none":
            state.metadata["parser_note"] = "no reranker: candidates are BM25's top-l (the paper reranks)"

        guesses = await _parametric_provisions(state, record)
        candidate_lists = await _candidates(retriever, state.metadata["question"], guesses, k, l)
        record.queries = guesses
        record.retrieved = [[h.provision.key for h in hits] for hits in candidate_lists]
        record.predicted = await _select(state, record, candidate_lists)

        prompt = koblex_prompt(state, "parser_answer", prompt_version)
        text = prompt.render(question=official_question(state), context_str=join_provisions(record.predicted))
        return await answer_with_prompt(state, generate, text)

    async def _parametric_provisions(state: TaskState, record: ProvisionEvidence) -> list[str]:
        prompt = koblex_prompt(state, "parser_provisions", prompt_version)
        reply = await ask(
            prompt.render(background=state.metadata["background"], question=state.metadata["question"])
        )
        guesses = parse_provision_list(reply.completion)
        if guesses is None:
            record.count("provision_list_unparsed")
            state.metadata["parametric_reply"] = reply.completion
            return []
        if max_provisions is not None:
            guesses = guesses[:max_provisions]
        return guesses

    async def _select(
        state: TaskState, record: ProvisionEvidence, candidate_lists: list[list[Hit]]
    ) -> list[str]:
        prompt = koblex_prompt(state, "parser_select", prompt_version)
        shown = [hits for hits in candidate_lists if hits]
        record.count("guesses_without_candidates", len(candidate_lists) - len(shown))
        replies = await collect(
            *[
                ask(
                    prompt.render(
                        background=state.metadata["background"],
                        question=state.metadata["question"],
                        candidates=format_candidates(hits),
                    )
                )
                for hits in shown
            ]
        )
        selected: list[str] = []
        for hits, reply in zip(shown, replies, strict=True):
            choice = parse_selection(reply.completion, len(hits))
            if choice is None:
                record.count("selection_fallbacks")
                choice = 0
            pool = shown[0] if official_selection_bug and choice < len(shown[0]) else hits
            selected.append(pool[choice].provision.key)
        return selected

    return solve


async def _candidates(
    retriever: Retriever,
    question: str,
    guesses: list[str],
    k: int,
    l: int,  # noqa: E741
) -> list[list[Hit]]:
    """BM25 top-k per guess, then rerank against the question (as the official code does) to top-l."""
    first_stage = await retriever.asearch_many(guesses, k) if guesses else []
    return [await retriever.arerank(question, hits, l) for hits in first_stage]
