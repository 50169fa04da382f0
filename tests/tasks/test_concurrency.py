"""A local model server gets enough connections to keep its batch full; API providers keep Inspect's default."""

from __future__ import annotations

import pytest
from inspect_ai.model import GenerateConfig, get_model

from koblex_tasks.tasks.concurrency import (
    LOCAL_SERVER_CONNECTIONS,
    connection_config,
    local_host,
    serves_locally,
)


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://localhost:8000/v1", True),
        ("http://10.1.2.3:8000/v1", True),
        ("http://192.168.0.7/v1", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://gpu-box:8000/v1", False),  # a name could be anything: the provider's default stays
        (None, False),
        ("", False),
    ],
)
def test_local_hosts(url: str | None, local: bool) -> None:
    assert local_host(url) is local


def test_a_local_server_gets_the_connections_an_api_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_API_KEY", "x")
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    local = get_model("openai-api/local/Qwen/Qwen3-8B", base_url="http://127.0.0.1:9/v1")
    api = get_model("openai/gpt-4o")
    assert serves_locally(local) and not serves_locally(api) and not serves_locally(None)
    assert (
        connection_config(GenerateConfig(temperature=0.0), local).max_connections == LOCAL_SERVER_CONNECTIONS
    )
    assert connection_config(GenerateConfig(temperature=0.0), local).temperature == 0.0
    assert connection_config(GenerateConfig(), api).max_connections is None
    # a task's own setting is kept (and the command line's `--max-connections` wins over the task's anyway)
    assert connection_config(GenerateConfig(max_connections=7), local).max_connections == 7
