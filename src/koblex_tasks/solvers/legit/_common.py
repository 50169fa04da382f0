"""Helpers shared by the LEGIT solvers: recorded prompts and the question the model answers."""

from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import TaskState

from koblex_tasks.solvers.common import recorded_prompt


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
