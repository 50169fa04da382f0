"""Before the first sample: no model, a model whose server is not there, or a server to start without its
package is one line, exit 1, in seconds (it used to hang 900 s, or end with exit 0 after a traceback)."""

from __future__ import annotations

import http.server
import importlib.util
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.model import get_model

from koblex_tasks.solvers.preflight import (
    CONNECT_TIMEOUT,
    PreflightError,
    check_model,
    unreachable,
    url_source,
)
from tests.cli.refusal import SECONDS, closed_port, inspect_eval

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def test_a_closed_port_is_refused_at_once_and_an_open_one_passes() -> None:
    started = time.monotonic()
    assert unreachable(f"http://127.0.0.1:{closed_port()}/v1") == "connection refused"
    assert time.monotonic() - started < CONNECT_TIMEOUT
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert unreachable(f"http://127.0.0.1:{server.getsockname()[1]}/v1") is None
    assert unreachable("http://127.0.0.1:notaport/v1") == "'127.0.0.1:notaport' has no valid port"


def test_the_url_is_traced_to_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_BASE_URL", "http://127.0.0.1:9/v1/")
    assert url_source("http://127.0.0.1:9/v1", "openai-api") == "LOCAL_BASE_URL"
    assert url_source("http://localhost:11434/v1", "ollama") == "--model-base-url or OLLAMA_BASE_URL"


def koblex_args(questions: Path, corpus: Path) -> list[str]:
    return ["koblex_tasks/koblex", "-T", f"data={questions}", "-T", f"corpus={corpus}", "-T", "reranker=none"]


@pytest.mark.slow
def test_a_model_server_that_is_not_there_is_one_line(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    env = {**OFFLINE, "LOCAL_BASE_URL": url, "LOCAL_API_KEY": "x"}
    run = inspect_eval(
        *koblex_args(tiny_questions, tiny_corpus), "--model", "openai-api/local/qwen", cwd=tmp_path, env=env
    )
    assert run.returncode == 1 and run.seconds < SECONDS
    assert run.line == (
        f"--model openai-api/local/qwen: cannot connect to {url} (LOCAL_BASE_URL): connection refused; "
        "start the server there or point LOCAL_BASE_URL at a running one"
    )
    assert not (tmp_path / "logs").exists()  # refused before the run: no log


@pytest.mark.slow
def test_a_judge_server_that_is_not_there_is_one_line(tiny_legit: Path, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    env = {**OFFLINE, "JUDGE_BASE_URL": url, "JUDGE_API_KEY": "x"}
    run = inspect_eval(
        "koblex_tasks/legit", "-T", f"data={tiny_legit}", "--model", "koblexmock/m",
        "--model-role", "grader=openai-api/judge/j", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert run.returncode == 1 and run.seconds < SECONDS
    assert run.line.startswith(
        f"--model-role grader=openai-api/judge/j: cannot connect to {url} (JUDGE_BASE_URL)"
    )


@pytest.mark.slow
def test_no_model_is_one_line_and_no_log(tiny_questions: Path, tiny_corpus: Path, tmp_path: Path) -> None:
    run = inspect_eval(*koblex_args(tiny_questions, tiny_corpus), cwd=tmp_path, env=OFFLINE)
    assert run.returncode == 1 and run.seconds < SECONDS
    assert run.line.startswith("no model given: add --model <provider>/<model>")
    assert not (tmp_path / "logs").exists()


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_vllm_without_vllm_or_a_server_is_one_line(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VLLM_BASE_URL", raising=False)
    run = inspect_eval(
        *koblex_args(tiny_questions, tiny_corpus), "--model", "vllm/Qwen/Qwen3-8B", cwd=tmp_path
    )
    assert run.returncode == 1 and run.seconds < SECONDS
    assert run.line.startswith("--model vllm/Qwen/Qwen3-8B: vllm is not installed")
    assert "pip install vllm" in run.line and "VLLM_BASE_URL=" in run.line


class Models(http.server.BaseHTTPRequestHandler):
    """A loopback server that lists one model, as `vllm serve served-model` does, and serves nothing else."""

    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [{"id": "served-model"}]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def models_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Models)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_server_serving_another_model_is_refused(models_url: str) -> None:
    check_model("--model ", get_model("openai-api/local/served-model", base_url=models_url, api_key="k"))
    with pytest.raises(PreflightError, match=r"serves served-model, not Qwen/Qwen3-8B"):
        check_model("--model ", get_model("openai-api/local/Qwen/Qwen3-8B", base_url=models_url, api_key="k"))
    check_model("--model ", get_model("openai/gpt-4o", base_url=models_url, api_key="k"))  # not self-hosted


@pytest.mark.slow
def test_the_wrong_model_for_a_running_server_is_one_line(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path, models_url: str
) -> None:
    env = {**OFFLINE, "LOCAL_BASE_URL": models_url, "LOCAL_API_KEY": "x"}
    run = inspect_eval(
        *koblex_args(tiny_questions, tiny_corpus), "--model", "openai-api/local/qwen", cwd=tmp_path, env=env
    )
    assert run.returncode == 1 and run.seconds < SECONDS
    assert run.line == (
        f"--model openai-api/local/qwen: the server at {models_url} serves served-model, not qwen: name one of "
        "these in the model, or start the server with this model"
    )
