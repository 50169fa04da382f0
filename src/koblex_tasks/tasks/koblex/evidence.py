"""The record every solver leaves on the sample: the contract between solvers and scorers.

Scorers read only this (plus the sample's metadata), never solver internals, so a new solver is scored
correctly as soon as it fills `predicted` and sets `uses_retrieval`.
"""

from inspect_ai.util import StoreModel
from pydantic import Field


class ProvisionEvidence(StoreModel):
    """What a method retrieved and which provisions it finally relied on (visible in `inspect view`)."""

    method: str = ""
    uses_retrieval: bool = False
    queries: list[str] = Field(default_factory=list)
    retrieved: list[list[str]] = Field(default_factory=list)  # per query, provision keys in rank order
    predicted: list[str] = Field(default_factory=list)  # provisions the method outputs (scored as a set)
    counters: dict[str, int] = Field(default_factory=dict)  # fallbacks and other events worth counting

    def count(self, name: str, by: int = 1) -> None:
        counters = dict(self.counters)
        counters[name] = counters.get(name, 0) + by
        self.counters = counters
