"""Which request shape a model's server takes: the official vLLM scripts' or the official OpenAI scripts'.

The paper ran two sets of scripts: the vLLM ones (Qwen3, EXAONE rows: a system and a user turn, seeds,
`chat_template_kwargs.enable_thinking=False`) against self-served models, and the OpenAI ones (GPT-4o rows: one
user message, no seed) against the hosted API. A hosted API rejects what its published request schema does not
list (OpenAI: HTTP 400 "Unrecognized request argument supplied: chat_template_kwargs"), so the shape follows
the provider Inspect builds the model with (the `<provider>/` of its name, which is the model API's registry
name): self-served providers get the vLLM scripts' shape, hosted APIs the OpenAI scripts' shape, and a provider
this module has no rule for the OpenAI scripts' shape with the fields every chat API takes (the log says so).
Mock providers answer anything: they keep the task's paper default. vLLM's extensions (`extra_body`,
`chat_template_kwargs`) only ever go to a self-served provider.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from inspect_ai.model import Model

Family = Literal["self-served", "hosted", "mock", "unknown"]
Shape = Literal["system_user", "user"]

# Providers serving a model the user runs (vLLM scripts' shape). `openai-api/<name>/...` always has a base URL.
SELF_SERVED = frozenset(
    {
        "vllm",
        "vllm-completions",
        "sglang",
        "openai-api",
        "openai-api-completions",
        "hf",
        "ollama",
        "llama-cpp-python",
        "transformer_lens",
        "nnterp",
    }
)
# Hosted APIs with a published request schema (OpenAI scripts' shape, nothing outside the schema).
HOSTED = frozenset(
    {
        "openai",
        "azureai",
        "anthropic",
        "google",
        "vertex",
        "mistral",
        "grok",
        "together",
        "groq",
        "fireworks",
        "openrouter",
        "bedrock",
        "cloudflare",
        "deepseek",
        "hf-inference-providers",
        "meta",
        "moonshot",
        "perplexity",
        "sambanova",
    }
)
MOCK = frozenset({"mockllm", "koblexmock", "replay", "none"})
SHAPE: dict[Family, Shape | None] = {
    "self-served": "system_user",
    "hosted": "user",
    "unknown": "user",
    "mock": None,
}
WHY: dict[Family, str] = {
    "self-served": "a self-served model: the official vLLM scripts' requests",
    "hosted": "a hosted API: the official OpenAI scripts' requests, only fields of its published schema",
    "unknown": "a provider with no rule here: the OpenAI scripts' requests with the fields every chat API takes",
    "mock": "a mock model: the task's default",
}


def provider_of(model: Model | str) -> str:
    """The provider of a model: the registry name of its model API, which is the prefix of its name."""
    return str(model).split("/", 1)[0]


def family_of(provider: str) -> Family:
    if provider in SELF_SERVED:
        return "self-served"
    if provider in HOSTED:
        return "hosted"
    return "mock" if provider in MOCK else "unknown"


@dataclass(frozen=True)
class Backend:
    """A model's provider, its family and the request shape `chat_format=auto` gives it."""

    model: str
    provider: str
    family: Family

    @classmethod
    def of(cls, model: Model | str) -> Backend:
        provider = provider_of(model)
        return cls(str(model), provider, family_of(provider))

    def chat_format(self, requested: str, default: Shape) -> Shape:
        """The shape sent: the one forced by `requested`, else the family's (a mock's: `default`)."""
        if requested != "auto":
            return requested  # type: ignore[return-value]  # checked against the task's choices
        return SHAPE[self.family] or default

    @property
    def takes_vllm_extensions(self) -> bool:
        """May a request carry vLLM's extensions (`extra_body.chat_template_kwargs`)? Mocks accept anything."""
        return self.family in ("self-served", "mock")

    def paper_backend_for(self, shape: str) -> bool:
        """Is `shape` what the paper sent to this kind of server (a mock stands in for either)?"""
        return self.family == "mock" or (self.family != "unknown" and SHAPE[self.family] == shape)

    def protocol_value(self, requested: str, default: Shape) -> str:
        """The chat-format setting as the protocol record names it: `requested` when the paper sent that
        shape to this kind of server (`auto` always does, but for a provider with no rule), else what ran."""
        shape = self.chat_format(requested, default)
        if self.paper_backend_for(shape):
            return requested
        return f"{shape} ({requested}) on {self.family} provider '{self.provider}'"

    def record(self, requested: str | None = None, default: Shape = "system_user") -> dict[str, Any]:
        """What the log says about this model's requests (`requested`: the task's chat format, if it has one)."""
        record: dict[str, Any] = {**asdict(self), "why": WHY[self.family]}
        if requested is not None:
            record["chat_format"] = self.chat_format(requested, default)
            if requested != "auto":
                record["why"] = f"forced by chat_format={requested}"
        if not self.takes_vllm_extensions:
            record["extensions"] = "none sent (no extra_body, no chat_template_kwargs)"
        return record


def backends_record(
    models: Iterable[tuple[str, Model]], requested: str | None = None, default: Shape = "system_user"
) -> dict[str, dict[str, Any]]:
    """Each model of a run (by the option that gave it: "--model ", "--model-role grader=") and its requests;
    the chat format is the evaluated model's (roles such as the judge send their own scorer's requests)."""
    return {
        flag.strip().rstrip("="): Backend.of(model).record(
            requested if flag.startswith("--model ") else None, default
        )
        for flag, model in models
    }
