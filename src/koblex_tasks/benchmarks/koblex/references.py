"""How KoBLEX's reference manifest (`references.v1.json`, next to this file) hashes an item's references.

The manifest is derived from the official questions by `tools/build_references.py` and checked against the
spec's dataset fingerprint there; `koblex_tasks.logs.references` reads it. It holds hashes, not texts: a log's
own references count only when they hash to the manifest's, so an edited answer or gold set is refused.
"""

import hashlib
import json
from collections.abc import Iterable

MANIFEST = "references.v1.json"
# The params key under which `koblex_tasks.logs.references` hands a re-derivation the item's manifest entry.
REFERENCE_PARAM = "_reference"


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def gold_sha256(keys: Iterable[str]) -> str:
    """A gold set's hash (order and repeats do not count: the provision metrics compare sets)."""
    return text_sha256(json.dumps(sorted(set(keys)), ensure_ascii=False))
