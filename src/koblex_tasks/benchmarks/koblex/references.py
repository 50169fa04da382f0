"""How KoBLEX's reference manifest (`references.v1.json`, next to this file) hashes an item's references.

The manifest is derived from the official questions by `tools/build_references.py` and checked against the
spec's dataset fingerprint there; `koblex_tasks.logs.references` reads it. It holds hashes, not texts: a log's
own references count only when they hash to the manifest's, so an edited answer or gold set is refused.
"""

import json
from collections.abc import Iterable

from koblex_tasks.spec import REFERENCE_MANIFEST as MANIFEST
from koblex_tasks.spec import REFERENCE_PARAM, text_sha256

__all__ = ["MANIFEST", "REFERENCE_PARAM", "gold_sha256", "text_sha256"]


def gold_sha256(keys: Iterable[str]) -> str:
    """A gold set's hash (order and repeats do not count: the provision metrics compare sets)."""
    return text_sha256(json.dumps(sorted(set(keys)), ensure_ascii=False))
