"""Lazily loaded torch models (the dense encoder, the cross-encoder reranker), written once for both.

torch and transformers are optional extras and slow to import, so they are imported on first use, and their
absence is reported with the extra to install. One model instance is shared by all concurrently running
samples, so it is loaded once and used under a lock.
"""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Generic, NamedTuple, TypeVar

from koblex_tasks.install import CPU_TORCH, pip_extra

T = TypeVar("T")


def install_hint(feature: str, extra: str, alternative: str) -> str:
    """The message for a missing torch/transformers: which extra to install, or which option avoids it."""
    return (
        f"{feature} needs torch and transformers: {pip_extra(extra)} (on a machine without a GPU first "
        f"{CPU_TORCH}), or run with -T {alternative}"
    )


class LoadedModel(NamedTuple):
    """A model ready for inference, with the torch module and device its inputs need."""

    torch: ModuleType
    tokenizer: Any  # None where the model tokenises its own inputs (FlagEmbedding)
    model: Any
    device: str

    def inputs(self, *texts: list[str], max_length: int) -> Any:
        """Tokenise a batch (of texts, or of text pairs given as two lists), padded and on the device."""
        return self.tokenizer(
            *texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt"
        ).to(self.device)


def import_torch(hint: str) -> tuple[ModuleType, ModuleType]:
    """torch and transformers, or a RuntimeError carrying `hint` if either is missing."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise RuntimeError(hint) from exc
    return torch, transformers


def pick_device(torch: ModuleType, device: str | None) -> str:
    """The requested device, else the GPU when there is one."""
    return device or ("cuda" if torch.cuda.is_available() else "cpu")


def load_transformers(
    model_id: str, auto_class: str, device: str | None, hint: str, dtype: str | None = None
) -> LoadedModel:
    """Tokenizer and model (`transformers.<auto_class>`) of `model_id`, in eval mode on the device, its
    weights cast to `dtype` (a torch dtype name; None: as transformers loads them)."""
    torch, transformers = import_torch(hint)
    device = pick_device(torch, device)
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_id)
    model = getattr(transformers, auto_class).from_pretrained(model_id)
    model = model.to(device=device, dtype=getattr(torch, dtype) if dtype else None).eval()
    return LoadedModel(torch, tokenizer, model, device)


class LazyModel(Generic[T]):
    """Loads its value on first use, once, and serialises its use with one (re-entrant) lock."""

    def __init__(self, load: Callable[[], T]) -> None:
        self._load = load
        self._value: T | None = None
        self.lock = threading.RLock()

    def get(self) -> T:
        """The loaded value, loading it first if this is the first call."""
        with self.lock:
            if self._value is None:
                self._value = self._load()
            return self._value

    @contextmanager
    def use(self) -> Iterator[T]:
        """The loaded value, with the lock held until the block ends (models are not thread-safe)."""
        with self.lock:
            yield self.get()
