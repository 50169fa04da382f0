"""A scripted mock model for solver tests: replies by prompt kind and records every prompt it saw."""

from collections.abc import Callable

from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, get_model

from koblex_tasks.providers.koblexmock import usage_for


class ScriptedModel:
    """`reply(kind, prompt)` decides the text; kind is provisions / select / answer (from the prompt)."""

    def __init__(self, reply: Callable[[str, str], str]) -> None:
        self.reply = reply
        self.prompts: list[tuple[str, str]] = []

    @staticmethod
    def kind(prompt: str) -> str:
        if "Answer must be a list of clauses" in prompt:
            return "provisions"
        if "candidate passages" in prompt:
            return "select"
        return "answer"

    def __call__(
        self, messages: list[ChatMessage], tools, tool_choice, config: GenerateConfig
    ) -> ModelOutput:
        prompt = messages[-1].text
        kind = self.kind(prompt)
        self.prompts.append((kind, prompt))
        text = self.reply(kind, prompt)
        out = ModelOutput.from_content(model="scripted", content=text)
        out.usage = usage_for(prompt, text)
        return out

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)

    def of_kind(self, kind: str) -> list[str]:
        return [p for k, p in self.prompts if k == kind]
