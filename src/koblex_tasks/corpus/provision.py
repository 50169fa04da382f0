"""A statute provision and its identity.

The KoBLEX paper identifies a provision by `hierarchy + content` with no separator: gold contexts, released
predictions and the BM25 corpus all use that string, so every comparison in this package does too.
"""

from dataclasses import dataclass


def provision_key(hierarchy: str, content: str) -> str:
    """The official identity of a provision: hierarchy and content joined with no separator."""
    return hierarchy + content


@dataclass(frozen=True, slots=True)
class Provision:
    """One statute paragraph of the retrieval pool."""

    row_id: str
    hierarchy: str
    content: str

    @property
    def key(self) -> str:
        return provision_key(self.hierarchy, self.content)
