"""Helpers shared by the LEGIT solvers: recorded prompts, the question the model answers, released rows."""

from collections.abc import Mapping
from typing import TypeVar

from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import TaskState

from koblex_tasks.errors import DataError
from koblex_tasks.solvers.common import recorded_prompt

Row = TypeVar("Row")


def expert_conversation(state: TaskState, prompt_name: str, version: str, **values: str) -> None:
    """The paper's two turns: the expert system prompt, then `prompt_name` rendered as the user turn."""
    system = recorded_prompt(state, "legit", "system", version)
    user = recorded_prompt(state, "legit", prompt_name, version)
    state.messages = [
        ChatMessageSystem(content=system.render()),
        ChatMessageUser(content=user.render(**values)),
    ]


def question(state: TaskState) -> str:
    """The question (facts and claims) of a LEGIT sample."""
    return state.metadata.get("question") or state.input_text


def doc_id(state: TaskState) -> str:
    return str(state.metadata.get("doc_id", state.sample_id))


def released_row(rows: Mapping[str, Row], file: str, state: TaskState, what: str, option: str) -> Row:
    """The row of a released file for this sample's document; a missing one is an error naming it."""
    row = rows.get(doc_id(state))
    if row is None:
        raise DataError(
            file,
            None,
            f"no {what} for doc {doc_id(state)!r} (use the task option {option}=FILE to keep only "
            "the documents the file answers)",
        )
    return row
