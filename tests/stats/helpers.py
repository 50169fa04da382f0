"""Shared by the statistics tests."""

from __future__ import annotations

import dataclasses
import json


def as_json(result: object) -> str:
    """Outputs must serialise without NaN."""
    return json.dumps(dataclasses.asdict(result), allow_nan=False)  # type: ignore[call-overload]
