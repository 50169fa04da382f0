"""`replay/<model>`: the model name under which replayed released predictions are logged.

It never generates: the `replay` solver supplies every answer. Calling it is a usage error, said plainly.
"""

from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo


@modelapi(name="replay")
class ReplayModel(ModelAPI):
    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        raise RuntimeError(
            f"replay/{self.model_name} only labels replayed predictions and cannot generate; "
            "use it with --solver koblex_tasks/replay -S file=PATH (or `koblex replay FILE`)"
        )
