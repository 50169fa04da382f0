"""Plug-in solvers for the event-rule tests: one that earns its outputs, and the issue's peeking ones.

Each reads what a custom solver in the same process can reach: `state.target`, the `-T data=` file (gold
provisions), the package's retriever. The peeking ones are what issue 32's hostile probe ranked #1.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

from inspect_ai.model import ChatMessageUser, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store_as

from koblex_tasks.benchmarks.koblex.evidence import OFFICIAL_ANSWER, ProvisionEvidence
from koblex_tasks.corpus.provision import provision_key
from koblex_tasks.data.koblex.dataset import GoldBook
from koblex_tasks.solvers.common import sample_retriever


def _gold(data: str, sample_id: object) -> list[str]:
    """The gold paragraphs of an item, read from the data file named by `-T data=` (no GoldBook needed)."""
    for line in Path(data).read_text("utf-8").splitlines():
        row = json.loads(line)
        if str(row["id"]) == str(sample_id):
            return [provision_key(c["hierarchy"], c["content"]) for c in row["contexts"]]
    raise LookupError(sample_id)


def _evidence(predicted: list[str], retrieved: bool = True) -> None:
    record = store_as(ProvisionEvidence)
    record.method, record.uses_retrieval = "plugin", retrieved
    record.predicted = predicted
    record.answer_rule = OFFICIAL_ANSWER.as_dict()


async def _ask(state: TaskState, generate: Generate, prompt: str) -> TaskState:
    state.messages = [ChatMessageUser(content=prompt)]
    return await generate(state)


def _question(state: TaskState) -> str:
    return state.metadata["background"] + state.metadata["question"]


@solver
def earned(k: int = 3) -> Solver:
    """Retrieves through the package's retriever, shows what it returned, answers from the model."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        retriever = await sample_retriever(state, reranker="none")
        found = await retriever.aretrieve(_question(state), k)
        _evidence([h.provision.key for h in found.returned])
        context = "\n".join(h.provision.text for h in found.returned)
        return await _ask(state, generate, f"{_question(state)}\n\nProvisions:\n{context}")

    return solve


@solver
def peek_without_model(data: str) -> Solver:
    """The issue's peeker: 'Answer: <target>' with no model call, the gold provisions as its evidence."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        _evidence(_gold(data, state.sample_id))
        state.output = ModelOutput.from_content(
            model=str(get_model()), content=f"Answer: {state.target.text}"
        )
        return state

    return solve


@solver
def target_in_prompt() -> Solver:
    """Calls the model, but with the reference answer in its prompt."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        _evidence([], retrieved=False)
        return await _ask(state, generate, f"{_question(state)}\nRepeat after me: {state.target.text}")

    return solve


@solver
def gold_in_prompt(data: str) -> Solver:
    """Shows the model the gold provisions read from the data file, without retrieving them."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        _evidence([], retrieved=False)
        gold = "\n".join(_gold(data, state.sample_id))
        return await _ask(state, generate, f"{_question(state)}\n\nProvisions:\n{gold}")

    return solve


@solver
def forged_evidence(data: str) -> Solver:
    """Answers from the model, but writes the gold provisions into its evidence without retrieving them."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        _evidence(_gold(data, state.sample_id))
        return await _ask(state, generate, _question(state))

    return solve


@solver
def unrecorded_search(k: int = 3) -> Solver:
    """Searches the index directly (`search`, which records nothing) and predicts what it found."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        retriever = await sample_retriever(state, reranker="none")
        hits = retriever.search(_question(state), k)
        _evidence([h.provision.key for h in hits])
        return await _ask(state, generate, _question(state))

    return solve


@solver
def gc_gold_in_prompt() -> Solver:
    """Finds the task's GoldBook through the garbage collector and shows the model its gold paragraphs."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        book = next(o for o in gc.get_objects() if isinstance(o, GoldBook))
        gold = book.get(state.sample_id)
        assert gold is not None
        _evidence([], retrieved=False)
        return await _ask(
            state, generate, f"{_question(state)}\n\nProvisions:\n" + "\n".join(gold.provisions)
        )

    return solve
