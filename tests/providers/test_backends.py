"""Which shape each provider gets, what the protocol record says, and the one line a rejected request is."""

import pytest

from koblex_tasks.solvers.backends import Backend
from koblex_tasks.solvers.rejections import rejection_line


@pytest.mark.parametrize(
    ("model", "family", "shape"),
    [
        ("vllm/Qwen/Qwen3-32B", "self-served", "system_user"),
        ("openai-api/local/qwen", "self-served", "system_user"),
        ("ollama/exaone3.5:32b", "self-served", "system_user"),
        ("openai/gpt-4.1", "hosted", "user"),
        ("anthropic/claude-sonnet-4-5", "hosted", "user"),
        ("together/Qwen/Qwen3-32B", "hosted", "user"),
        ("somecloud/model", "unknown", "user"),
        ("koblexmock/x", "mock", "system_user"),
    ],
)
def test_auto_follows_the_provider(model: str, family: str, shape: str) -> None:
    backend = Backend.of(model)
    assert backend.family == family and backend.chat_format("auto", "system_user") == shape
    assert backend.takes_vllm_extensions == (family in ("self-served", "mock"))
    assert backend.chat_format("user", "system_user") == "user"  # a forced format still forces


def test_the_protocol_names_a_shape_sent_to_the_other_kind_of_server() -> None:
    assert Backend.of("openai/gpt-4o").protocol_value("auto", "system_user") == "auto"
    assert Backend.of("openai/gpt-4o").protocol_value("user", "system_user") == "user"
    assert Backend.of("vllm/Qwen/Qwen3-8B").protocol_value("system_user", "system_user") == "system_user"
    assert Backend.of("openai/gpt-4o").protocol_value("system_user", "system_user") == (
        "system_user (system_user) on hosted provider 'openai'"
    )
    assert (
        Backend.of("vllm/q").protocol_value("user", "system_user")
        == "user (user) on self-served provider 'vllm'"
    )
    unknown = Backend.of("somecloud/m")
    assert unknown.protocol_value("auto", "system_user") == "user (auto) on unknown provider 'somecloud'"
    assert "no rule" in unknown.record("auto")["why"]


def test_a_rejection_is_the_servers_message_in_one_line() -> None:
    body = "{'error': {'message': 'Unrecognized request argument supplied: top_k', 'type': 'invalid_request_error'}}"
    line = rejection_line(f"Error code: 400 - {body}", "--model openai/gpt-4o")
    assert line is not None and "\n" not in line
    assert line.startswith(
        "--model openai/gpt-4o: the server rejected the request (HTTP 400): "
        "Unrecognized request argument supplied: top_k;"
    )
    assert (
        rejection_line("Error code: 429 - slow down") is None
    )  # rate limits are the client's retry business
    assert rejection_line("Error code: 500 - boom") is None and rejection_line("KeyError: 'x'") is None


def test_an_anthropic_rejection_is_read_from_the_traceback() -> None:
    """Inspect wraps anthropic's error: the status and message are on the traceback's last client line."""
    message = "ModelGenerateError('\\nRequest: {...}\\n\\nBadRequestError(\\'400 seed: Extra inputs\\')')"
    traceback = (
        "Traceback (most recent call last):\n  File ...\n"
        "anthropic.BadRequestError: 400 seed: Extra inputs are not permitted (path: /v1/messages)\n"
        "inspect_ai.model._model.ModelGenerateError: \n"
    )
    line = rejection_line(message, "--model anthropic/claude-sonnet-4-5", traceback)
    assert line is not None and line.startswith(
        "--model anthropic/claude-sonnet-4-5: the server rejected the request (HTTP 400): "
        "seed: Extra inputs are not permitted (path: /v1/messages);"
    )
    assert rejection_line(message, None, traceback.replace(": 400 ", ": 429 ")) is None
    assert rejection_line("ModelGenerateError('boom')", None, "KeyError: 'x'") is None


def test_a_google_rejection_is_read_from_the_traceback() -> None:
    """google-genai prints `<code> <STATUS>. <body as a dict>`; the line gives the body's message only."""
    body = {
        "error": {
            "code": 400,
            "message": "Invalid JSON payload received. Unknown name \"seed\" at 'generation_config': Cannot find field.",
            "status": "INVALID_ARGUMENT",
        }
    }
    traceback = f"Traceback (most recent call last):\n  ...\ngoogle.genai.errors.ClientError: 400 INVALID_ARGUMENT. {body}"
    line = rejection_line(
        f"ClientError: 400 INVALID_ARGUMENT. {body}", "--model google/gemini-2.5-flash", traceback
    )
    assert line == (
        "--model google/gemini-2.5-flash: the server rejected the request (HTTP 400): Invalid JSON payload "
        "received. Unknown name \"seed\" at 'generation_config': Cannot find field.; nothing was retried, fix "
        "the setup (model, base URL, -M/-T arguments) and run again"
    )
    limited = traceback.replace("400 INVALID_ARGUMENT", "429 RESOURCE_EXHAUSTED")
    assert rejection_line("", None, limited) is None  # a rate limit: the client's retry business
