"""Where the in-process reranker runs, against the GPU a vLLM server started by Inspect takes.

`--model vllm/<model>` with no base URL has Inspect start `vllm serve`, which reserves 90% of the memory of
each GPU it uses (`gpu_memory_utilization`), starting at the first visible one; a cross-encoder loaded on
that GPU (the default device when a GPU is visible) then fails to allocate or starves the server. One line
before the first sample says so, with the remedies.
"""

from __future__ import annotations

import importlib.util
import logging
import os

from koblex_tasks._inspect_compat import active_model
from koblex_tasks.corpus.rerank import TEST_RERANKERS
from koblex_tasks.corpus.rerank_stage import RerankSetup
from koblex_tasks.solvers.preflight import SELF_SERVING, server_url

logger = logging.getLogger(__name__)


def _vllm_gpus() -> set[int] | None:
    """The GPUs a vLLM server Inspect starts will take (`-M device=`, else the first `tensor_parallel_size`
    × `pipeline_parallel_size`); None: no such server."""
    model = active_model()
    if model is None or str(model).split("/", 1)[0] != "vllm":
        return None
    if server_url(model) is not None or os.environ.get(SELF_SERVING["vllm"][1]):
        return None  # a running server, wherever it is
    args = getattr(model.api, "server_args", None) or {}
    devices = str(args.get("devices", args.get("device", "")) or "")
    if devices:
        return {int(d) for d in devices.replace(" ", "").split(",") if d.isdigit()}
    size = int(args.get("tensor_parallel_size", 1) or 1) * int(args.get("pipeline_parallel_size", 1) or 1)
    return set(range(size))


def _reranker_gpu(device: str | None) -> int | None:
    """The GPU index the in-process reranker will load on; None: the CPU."""
    if device is not None:
        if not device.startswith("cuda"):
            return None
        _, _, index = device.partition(":")
        return int(index) if index.isdigit() else 0
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    return 0 if torch.cuda.is_available() else None


def shared_gpu_warning(setup: RerankSetup) -> str | None:
    """The one-line warning when the reranker and an Inspect-started vLLM server would share a GPU."""
    if setup.url or setup.name in ("", "none", *TEST_RERANKERS):
        return None
    gpus = _vllm_gpus()
    if gpus is None:
        return None
    index = _reranker_gpu(setup.device)
    if index is None or index not in gpus:
        return None
    return (
        f"the reranker ({setup.model}) would load on cuda:{index}, where the vLLM server Inspect starts "
        "reserves 90% of the memory: put it on another GPU (-T reranker_device=cuda:N) or the CPU "
        "(-T reranker_device=cpu), leave it room (-M gpu_memory_utilization=0.8), or serve it "
        "(-T reranker_url=http://<host>:<port>)"
    )


def warn_shared_gpu(setup: RerankSetup) -> None:
    """Log the shared-GPU warning, if any (before the first sample: the task calls this when it is built)."""
    line = shared_gpu_warning(setup)
    if line is not None:
        logger.warning(line)
