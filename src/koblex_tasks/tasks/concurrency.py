"""Keep a local model server busy: the task's connection default for vLLM, SGLang and loopback/private servers.

The official scripts send a stage's 226 prompts to vLLM as one batch. Through Inspect a run is as parallel as its
connections let it be, and Inspect's adaptive default (20 growing to 100) leaves a continuous-batching server at
about a third of its batch: `bench/bench_saturation.py` measured ParSeR at 2.04x the official stage-by-stage
schedule with the default and 1.25-1.27x with 256-512 connections. A local server queues what exceeds its
`max_num_seqs` itself, so the task asks for `LOCAL_SERVER_CONNECTIONS` when the evaluated model is one; API
providers (rate limits) keep Inspect's default, and `--max-connections` on the command line still wins (Inspect
merges the command line's generate options over the task's).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from inspect_ai.model import GenerateConfig, Model

from koblex_tasks._inspect_compat import active_model
from koblex_tasks.solvers.preflight import SELF_SERVING, server_url

LOCAL_SERVER_CONNECTIONS = (
    512  # >= 2 x 226: both of a question's selection calls for every question in flight
)


def local_host(url: str | None) -> bool:
    """Is the URL's host this machine or a private network (a server of the user's, not an API)?"""
    host = urlsplit(url or "").hostname
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False  # a name: could be anything, keep the provider's default
    return address.is_loopback or address.is_private


def serves_locally(model: Model | None) -> bool:
    if model is None:
        return False
    if str(model).split("/", 1)[0] in SELF_SERVING:  # providers that start (or reuse) a server of their own
        return True
    return local_host(server_url(model))


def connection_config(config: GenerateConfig, model: Model | None = None) -> GenerateConfig:
    """`config` with `LOCAL_SERVER_CONNECTIONS` when the model evaluated (default: the eval's active model) is a
    local server."""
    if config.max_connections is None and serves_locally(model or active_model()):
        return config.merge(GenerateConfig(max_connections=LOCAL_SERVER_CONNECTIONS))
    return config
