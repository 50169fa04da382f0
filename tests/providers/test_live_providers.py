"""The real `inspect eval` against local stand-ins: a strict OpenAI API, a lenient vLLM-like server, nothing."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from tests.cli.refusal import SECONDS, Refusal, closed_port, inspect_eval
from tests.providers.standins import StandIn, lenient_vllm, strict_anthropic, strict_openai

pytestmark = pytest.mark.slow
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
SOLVERS = (
    "standard_prompting", "chain_of_thought", "one_time_retrieval", "self_ask", "ircot", "flare", "probtree",
    "beamaggr", "parser",
)  # fmt: skip


# Methods whose OpenAI scripts send one user message (IRCoT's, Self-Ask's, ... keep their own system turn:
# `koblex conformance` proves them call for call).
ONE_USER_MESSAGE = frozenset({"standard_prompting", "chain_of_thought", "one_time_retrieval", "parser"})


@pytest.fixture
def schema(shared_data: Path) -> Path:
    path = shared_data / "providers" / "openai-chat-completions.schema.json"
    if not path.exists():
        pytest.skip(f"{path} is not there (see the shared data README)")
    return path


def koblex(questions: Path, corpus: Path) -> list[str]:
    return [
        "koblex_tasks/koblex",
        "-T",
        f"data={questions}",
        "-T",
        f"corpus={corpus}",
        "-T",
        "reranker=stub-overlap",
    ]


def logs(tmp_path: Path) -> list:
    return [read_eval_log(info) for info in list_eval_logs(str(tmp_path / "logs"))]


def passed_hosted(
    run: Refusal, api: StandIn, tmp_path: Path, is_judge: Callable[[dict[str, Any]], bool]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A solver and the judge against a strict hosted stand-in passed: exit 0, nothing rejected, the log a
    success in the OpenAI scripts' shape, LF-Eval scored every sample. The judge's and the method's requests."""
    assert run.returncode == 0, run.lines[-20:]
    assert api.rejected == [] and api.accepted
    [log] = logs(tmp_path)
    assert log.status == "success"
    assert log.eval.metadata["backends"]["--model"]["chat_format"] == "user"
    assert log.eval.metadata["backends"]["--model-role grader"]["family"] == "hosted"
    judged = [b for b in api.accepted if is_judge(b)]
    assert judged
    # The stand-in judge's stated 7 weighted by its top logprobs (7, 8, 6) as DeepEval weights: between 7 and 8.
    scores = [s.scores["lf_eval"].value["lf_eval"] for s in log.samples or [] if s.scores]  # type: ignore[index]
    assert scores and all(70 < score < 80 for score in scores), scores
    return judged, [b for b in api.accepted if b not in judged]


@pytest.mark.parametrize("solver", SOLVERS)
def test_every_solver_and_the_judge_pass_the_strict_openai_api_with_no_chat_format(
    solver: str, schema: Path, tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    with strict_openai(schema) as api:
        run = inspect_eval(
            *koblex(tiny_questions, tiny_corpus), "--solver", f"koblex_tasks/{solver}", "--limit", "1",
            "--model", "openai/gpt-4o", "--model-role", "grader=openai/gpt-4o", "--display", "none",
            cwd=tmp_path, env={**OFFLINE, "OPENAI_BASE_URL": api.base_url, "OPENAI_API_KEY": "x"},
        )  # fmt: skip
    judged, methods = passed_hosted(run, api, tmp_path, lambda b: b.get("top_logprobs") == 20)
    assert all(b["logprobs"] is True for b in judged)
    for body in methods:
        assert "seed" not in body and "chat_template_kwargs" not in body
        assert (body["temperature"], body["max_tokens"]) in ((0.01, 2000), (0.0, 4000)), body
        if solver in ONE_USER_MESSAGE:  # the OpenAI scripts' one user message
            assert [m["role"] for m in body["messages"]] == ["user"]


def test_a_grid_over_two_openai_models_passes_the_strict_api(
    schema: Path, tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    env = {**os.environ, **OFFLINE, "OPENAI_API_KEY": "x"}
    with strict_openai(schema, ("gpt-4o", "gpt-4.1")) as api:
        env["OPENAI_BASE_URL"] = api.base_url
        import subprocess
        import sys

        proc = subprocess.run(
            [sys.executable, "-c", "import sys; from koblex_tasks.cli import main; sys.exit(main())", "grid",
             "koblex", "--model", "openai/gpt-4o", "--model", "openai/gpt-4.1", "--methods", "parser", "--no-released", "--display", "none", "--out", str(tmp_path / "out"),
             "--limit", "1", "--log-dir", str(tmp_path / "logs"), "-T", f"data={tiny_questions}",
             "-T", f"corpus={tiny_corpus}", "-T", "reranker=stub-overlap"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env,
        )  # fmt: skip
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert api.rejected == [] and {b["model"] for b in api.accepted} == {"gpt-4o", "gpt-4.1"}
    assert all("seed" not in b and [m["role"] for m in b["messages"]] == ["user"] for b in api.accepted)


def test_vllm_gets_the_vllm_scripts_requests(tiny_questions: Path, tiny_corpus: Path, tmp_path: Path) -> None:
    with lenient_vllm("Qwen/Qwen3-32B") as server:
        run = inspect_eval(
            *koblex(tiny_questions, tiny_corpus), "--model", "vllm/Qwen/Qwen3-32B", "--display", "none",
            cwd=tmp_path, env={**OFFLINE, "VLLM_BASE_URL": server.base_url, "VLLM_API_KEY": "x"},
        )  # fmt: skip
    assert run.returncode == 0, run.lines[-20:]
    assert len(server.accepted) == 2 * 4  # ParSeR: provisions, two selections, the answer per question
    for body in server.accepted:
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        assert body["seed"] == 0 and body["chat_template_kwargs"]["enable_thinking"] is False
    [log] = logs(tmp_path)
    assert log.status == "success" and log.eval.metadata["backends"]["--model"]["family"] == "self-served"


def test_a_dead_openai_base_url_is_one_line(tiny_questions: Path, tiny_corpus: Path, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    run = inspect_eval(
        *koblex(tiny_questions, tiny_corpus), "--model", "openai/gpt-4o",
        cwd=tmp_path, env={**OFFLINE, "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "x"},
    )  # fmt: skip
    assert run.returncode == 1 and run.seconds <= 15
    assert run.line == (
        f"--model openai/gpt-4o: cannot connect to {url} (OPENAI_BASE_URL): connection refused; "
        "start the server there or point OPENAI_BASE_URL at a running one"
    )


def test_a_request_the_server_rejects_stops_the_run_in_one_line(
    schema: Path, tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    with strict_openai(schema) as api:
        run = inspect_eval(
            *koblex(tiny_questions, tiny_corpus), "--model", "openai/gpt-4o-mini",
            "--model-role", "grader=openai/gpt-4o", cwd=tmp_path, env={**OFFLINE, "OPENAI_BASE_URL": api.base_url, "OPENAI_API_KEY": "x"},
        )  # fmt: skip
    assert run.returncode == 1 and run.seconds < SECONDS
    assert api.rejected
    assert run.line == (  # a model the server does not serve: HTTP 404, the server's own message
        "--model openai/gpt-4o-mini: the server rejected the request (HTTP 404): The model `gpt-4o-mini` does "
        "not exist; nothing was retried, fix the setup (model, base URL, -M/-T arguments) and run again"
    )
    [log] = logs(tmp_path)
    assert log.status == "error"  # the log is written as usual


def test_legit_with_a_gpt_4o_judge_passes_the_strict_openai_api(
    schema: Path, tiny_legit: Path, tmp_path: Path
) -> None:
    with strict_openai(schema) as api:
        run = inspect_eval(
            "koblex_tasks/legit", "-T", f"data={tiny_legit}", "--model", "openai/gpt-4o",
            "--model-role", "grader=openai/gpt-4o", "--display", "none",
            cwd=tmp_path, env={**OFFLINE, "OPENAI_BASE_URL": api.base_url, "OPENAI_API_KEY": "x"},
        )  # fmt: skip
    assert run.returncode == 0, run.lines[-20:]
    assert api.rejected == [] and api.accepted
    [log] = logs(tmp_path)
    assert log.status == "success"
    assert log.eval.metadata["backends"]["--model-role grader"]["family"] == "hosted"


def test_an_anthropic_model_passes_the_strict_messages_api(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    pytest.importorskip("anthropic", reason="the anthropic extra: pip install -e '.[anthropic]'")
    with strict_anthropic() as api:
        run = inspect_eval(
            *koblex(tiny_questions, tiny_corpus), "--model", "anthropic/claude-sonnet-4-5", "--limit", "1",
            "--display", "none", cwd=tmp_path,
            env={**OFFLINE, "ANTHROPIC_BASE_URL": api.base_url.removesuffix("/v1"), "ANTHROPIC_API_KEY": "x"},
        )  # fmt: skip
    assert run.returncode == 0, run.lines[-20:]
    assert api.rejected == [] and len(api.accepted) == 4  # ParSeR: provisions, two selections, the answer
    for body in api.accepted:
        assert [m["role"] for m in body["messages"]] == ["user"] and "system" not in body
        assert body["max_tokens"] == 2000
    [log] = logs(tmp_path)
    assert log.status == "success" and log.eval.metadata["backends"]["--model"]["chat_format"] == "user"


def test_a_request_the_anthropic_api_rejects_stops_the_run_in_one_line(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    """The same one-line stop on another provider's client: a field the Messages API does not take (a seed)."""
    pytest.importorskip("anthropic", reason="the anthropic extra: pip install -e '.[anthropic]'")
    with strict_anthropic() as api:
        run = inspect_eval(
            *koblex(tiny_questions, tiny_corpus), "--model", "anthropic/claude-sonnet-4-5", "--limit", "1",
            "-M", "extra_body={\"seed\": 0}", "--display", "none", cwd=tmp_path,
            env={**OFFLINE, "ANTHROPIC_BASE_URL": api.base_url.removesuffix("/v1"), "ANTHROPIC_API_KEY": "x"},
        )  # fmt: skip
    assert api.rejected and not api.accepted
    assert run.returncode == 1 and run.seconds < SECONDS, run.lines[-20:]
    assert run.line.startswith(
        "--model anthropic/claude-sonnet-4-5: the server rejected the request (HTTP 400): "
    )
    assert "seed" in run.line
