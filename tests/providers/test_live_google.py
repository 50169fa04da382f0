"""The real `inspect eval` against a strict Gemini API stand-in (`--model google/...`, the `[google]` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli.refusal import SECONDS, closed_port, inspect_eval
from tests.providers.standins import StandIn, strict_google
from tests.providers.test_live_providers import (
    OFFLINE,
    ONE_USER_MESSAGE,
    SOLVERS,
    koblex,
    logs,
    passed_hosted,
)

pytestmark = pytest.mark.slow
GEMINI = "google/gemini-2.5-flash"


@pytest.fixture(autouse=True)
def _google_client() -> None:
    pytest.importorskip("google.genai", reason="the google extra: pip install -e '.[google]'")


def env(api: StandIn | str) -> dict[str, str | None]:
    url = api if isinstance(api, str) else api.base_url
    return {**OFFLINE, "GOOGLE_BASE_URL": url, "GOOGLE_API_KEY": "x", "GEMINI_API_KEY": None}


def config(body: dict[str, Any]) -> dict[str, Any]:
    return dict(body.get("generationConfig") or {})


@pytest.mark.parametrize("solver", SOLVERS)
def test_every_solver_and_the_judge_pass_the_strict_gemini_api_with_no_chat_format(
    solver: str, tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    with strict_google() as api:
        run = inspect_eval(
            *koblex(tiny_questions, tiny_corpus), "--solver", f"koblex_tasks/{solver}", "--limit", "1",
            "--model", GEMINI, "--model-role", f"grader={GEMINI}", "--display", "none", cwd=tmp_path, env=env(api),
        )  # fmt: skip
    judged, methods = passed_hosted(run, api, tmp_path, lambda b: config(b).get("logprobs") == 20)
    assert all(config(b)["responseLogprobs"] is True for b in judged)  # LF-Eval's top 20: Gemini's maximum
    for body in methods:
        generation = config(body)
        assert "seed" not in generation
        assert (generation["temperature"], generation["maxOutputTokens"]) in ((0.01, 2000), (0.0, 4000)), body
        if solver in ONE_USER_MESSAGE:  # the OpenAI scripts' one user message: one user turn, no system
            assert [c["role"] for c in body["contents"]] == ["user"] and "systemInstruction" not in body


def test_a_request_the_gemini_api_rejects_stops_the_run_in_one_line(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    """Google's own 400 (more top logprobs than its 20), one line, exit 1, not a traceback per sample."""
    with strict_google() as api:
        run = inspect_eval(
            *koblex(tiny_questions, tiny_corpus), "--model", GEMINI, "--limit", "1", "--logprobs",
            "--top-logprobs", "25", "--display", "none", cwd=tmp_path, env=env(api),
        )  # fmt: skip
    assert api.rejected and not api.accepted
    assert run.returncode == 1 and run.seconds < SECONDS, run.lines[-20:]
    assert run.line == (
        f"--model {GEMINI}: the server rejected the request (HTTP 400): Invalid value at "
        "'generation_config.logprobs': 25 is greater than the maximum of 20; nothing was retried, fix the "
        "setup (model, base URL, -M/-T arguments) and run again"
    )
    [log] = logs(tmp_path)
    assert log.status == "error"


def test_a_dead_google_base_url_is_one_line(tiny_questions: Path, tiny_corpus: Path, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    run = inspect_eval(*koblex(tiny_questions, tiny_corpus), "--model", GEMINI, cwd=tmp_path, env=env(url))
    assert run.returncode == 1 and run.seconds <= 15
    assert run.line == (
        f"--model {GEMINI}: cannot connect to {url} (GOOGLE_BASE_URL): connection refused; "
        "start the server there or point GOOGLE_BASE_URL at a running one"
    )
