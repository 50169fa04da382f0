"""The judge of a judge-graded scorer: which role, how it samples, whether replies are cached.

Both benchmarks' judges (LF-Eval, the LEGIT rubric) take the same settings, like Inspect's own
`model_graded_qa(model_role=...)`: the model role, temperature, max tokens and Inspect's response cache
(`CachePolicy`, so re-scoring a log with `inspect score` does not pay for the same judge call twice). The
settings are recorded in every score's metadata (`judge_config`).
"""

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)

from koblex_tasks.judge_role import GRADER_ROLE, grader_bound

CACHE_EXPIRY = "1W"  # Inspect's default expiry, used when `cache=True`


@dataclass(frozen=True)
class JudgeConfig:
    """How the judge is called. None leaves a setting to the scorer's own default for that call."""

    role: str = GRADER_ROLE
    temperature: float | None = None
    max_tokens: int | None = None
    cache: bool | str = False  # False, True (expiry "1W") or an expiry such as "1D", "1M", "never"

    def __post_init__(self) -> None:
        if self.temperature is not None and self.temperature < 0:
            raise ValueError(f"judge temperature must be >= 0, got {self.temperature}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"judge max_tokens must be >= 1, got {self.max_tokens}")
        self.cache_policy()  # an invalid expiry fails when the task is built, not at the first judge call

    def bound(self) -> bool:
        """Is a model bound to the judge role (never fall back to the model under test)?"""
        return grader_bound(self.role)

    def model(self) -> Model:
        return get_model(role=self.role, required=True)

    def generate_config(
        self, temperature: float | None = None, max_tokens: int | None = None, **rest: Any
    ) -> GenerateConfig:
        """A GenerateConfig with this judge's temperature and max tokens, else the given call defaults."""
        return GenerateConfig(
            temperature=self.temperature if self.temperature is not None else temperature,
            max_tokens=self.max_tokens if self.max_tokens is not None else max_tokens,
            **rest,
        )

    def cache_policy(self) -> bool | CachePolicy:
        """Inspect's cache argument: no cache, or a policy shared across epochs (the judge is not under test)."""
        if self.cache is False or self.cache in ("", "false", "none", "off"):
            return False
        expiry: str | None = CACHE_EXPIRY if self.cache is True else str(self.cache)
        if expiry == "never":
            expiry = None
        elif CachePolicy.from_string(expiry) is None:  # type: ignore[arg-type]
            raise ValueError(f"judge cache expiry {self.cache!r} is not like '12h', '1D', '1W' or 'never'")
        return CachePolicy(expiry=expiry, per_epoch=False)

    def describe(self) -> dict[str, Any]:
        """What goes into the score metadata."""
        return asdict(self)

    async def generate(
        self, judge: Model, messages: Sequence[ChatMessage], config: GenerateConfig
    ) -> ModelOutput:
        return await judge.generate(list(messages), config=config, cache=self.cache_policy())


def total_usage(outputs: Iterable[ModelOutput | ModelUsage | None]) -> dict[str, Any]:
    """Summed token usage of judge calls, as a plain dict for the score metadata."""
    total = ModelUsage()
    for item in outputs:
        usage = item.usage if isinstance(item, ModelOutput) else item
        if usage is not None:
            total = total + usage
    return total.model_dump(exclude_none=True)
