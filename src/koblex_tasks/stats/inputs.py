"""Input conventions shared by every statistic: score matrices, system names, settings, defaults.

Scores are an (n_systems, n_items) float matrix, or one system's (n_items,) vector, with NaN marking an
unscored item; infinities are errors. Outputs never carry NaN: an undefined value is ``None`` with a
``reason``, so results stay valid JSON.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_RESAMPLES = 10_000
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SEED = 0
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class Settings:
    """How intervals and tests are computed, one value for the leaderboard, the grid and the audit (written into
    every export, so numbers can be reproduced)."""

    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    confidence: float = DEFAULT_CONFIDENCE
    alpha: float = DEFAULT_ALPHA


Vector = np.ndarray | Sequence[float]
Scores = np.ndarray | Sequence[float] | Sequence[Sequence[float]]


def as_matrix(scores: Scores) -> np.ndarray:
    """(n_systems, n_items) float64 copy of ``scores``; a vector becomes one row."""
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2:
        raise ValueError(f"scores must be 1-D or 2-D (n_systems, n_items), got shape {x.shape}")
    if np.isinf(x).any():
        raise ValueError("scores contain infinities; use NaN for missing items")
    return x


def as_pair(a: Vector, b: Vector) -> np.ndarray:
    """Two runs' per-item scores as a (2, n_items) matrix."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"a and b must be 1-D with the same length, got {x.shape} and {y.shape}")
    return as_matrix(np.stack([x, y]))


def check_names(names: Sequence[str], n_systems: int) -> list[str]:
    """One unique name per system (names key results, so duplicates would silently merge rows)."""
    names = [str(n) for n in names]
    if len(names) != n_systems:
        raise ValueError(f"{len(names)} names for {n_systems} systems")
    if len(set(names)) != len(names):
        raise ValueError("system names must be unique")
    return names


def optional_names(names: Sequence[str] | None, n_systems: int) -> list[str | None]:
    """Checked names, or None per system when the caller did not name them."""
    return [None] * n_systems if names is None else list(check_names(names, n_systems))


def check_settings(n_resamples: int, confidence: float) -> None:
    if int(n_resamples) < 1:
        raise ValueError("n_resamples must be at least 1")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")


def check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be in (0, 1)")


def check_binary(x: np.ndarray) -> None:
    """McNemar counts 0/1 outcomes; any other value means the wrong test was chosen."""
    v = x[~np.isnan(x)]
    if not np.isin(v, (0.0, 1.0)).all():
        raise ValueError("binary metric scores must be 0, 1 or NaN (missing)")


def opt(value: float | np.floating) -> float | None:
    """Python float, or None for NaN: JSON outputs never carry NaN."""
    f = float(value)
    return None if math.isnan(f) else f
