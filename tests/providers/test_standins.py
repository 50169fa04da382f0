"""The strict stand-ins reject what the real APIs reject (so a live test passing against them means something)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.providers.standins import gemini_route

GEMINI = gemini_route(("gemini-2.5-flash",))
PATH = "/v1beta/models/gemini-2.5-flash:generateContent"
USER = {"contents": [{"role": "user", "parts": [{"text": "질문"}]}]}


def message(body: dict[str, Any], path: str = PATH) -> tuple[int, str]:
    status, payload = GEMINI(path, body)
    return status, payload["error"]["message"] if status != 200 else ""


def test_gemini_answers_a_valid_request_in_its_shape() -> None:
    body = {
        **USER,
        "generationConfig": {"temperature": 0.01, "maxOutputTokens": 2000, "responseLogprobs": True},
    }
    status, reply = GEMINI(PATH.replace("v1beta", "v1"), body)
    assert status == 200
    [candidate] = reply["candidates"]
    text = candidate["content"]["parts"][0]["text"]
    assert text and candidate["finishReason"] == "STOP" and candidate["content"]["role"] == "model"
    assert len(candidate["logprobsResult"]["chosenCandidates"]) == len(text)
    assert reply["usageMetadata"]["candidatesTokenCount"] == len(text)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {**USER, "seed_value": 1},
            'Invalid JSON payload received. Unknown name "seed_value": Cannot find field.',
        ),
        (
            {**USER, "generationConfig": {"max_tokens": 10}},
            "Invalid JSON payload received. Unknown name \"max_tokens\" at 'generation_config': Cannot find field.",
        ),
        (
            {"contents": [{"role": "user", "parts": [{"content": "x"}]}]},
            "Invalid JSON payload received. Unknown name \"content\" at 'contents[0].parts[0]': Cannot find field.",
        ),
        (
            {**USER, "generationConfig": {"thinkingConfig": {"budget": 0}}},
            "Invalid JSON payload received. Unknown name \"budget\" at 'generation_config.thinking_config': "
            "Cannot find field.",
        ),
        (
            {**USER, "generationConfig": {"temperature": 2.5}},
            "Invalid value at 'generation_config.temperature': 2.5 is greater than the maximum of 2",
        ),
        (
            {**USER, "generationConfig": {"stopSequences": list("abcdef")}},
            "Invalid value at 'generation_config.stop_sequences': ['a', 'b', 'c', 'd', 'e', 'f'] is too long",
        ),
        (
            {**USER, "generationConfig": {"logprobs": 5}},
            "logprobs is only valid if response_logprobs is true",
        ),
        ({"contents": []}, "* GenerateContentRequest.contents: contents is not specified"),
    ],
)
def test_gemini_rejects_what_the_api_reference_does_not_list(body: dict[str, Any], expected: str) -> None:
    assert message(body) == (400, expected)


def test_gemini_takes_snake_case_names_as_googles_json_parser_does() -> None:
    body = {
        **USER,
        "generation_config": {"max_output_tokens": 5, "thinking_config": {"include_thoughts": True}},
    }
    assert message(body) == (200, "")


def test_gemini_serves_only_its_models_and_method() -> None:
    assert message(USER, PATH.replace("gemini-2.5-flash", "gemini-x"))[0] == 404
    assert message(USER, PATH.replace("generateContent", "embedContent"))[0] == 404


def test_gemini_gives_a_judge_its_verdict_with_at_most_the_top_candidates_asked() -> None:
    judge = {"contents": [{"role": "user", "parts": [{"text": "Evaluate ...\n\nJSON:"}]}]}
    config = {"responseLogprobs": True, "logprobs": 2}
    status, reply = GEMINI(PATH, {**judge, "generationConfig": config})
    [candidate] = reply["candidates"]
    assert status == 200 and candidate["content"]["parts"][0]["text"] == '{"score": 7, "reason": "stand-in"}'
    tops = [t["candidates"] for t in candidate["logprobsResult"]["topCandidates"]]
    assert max(map(len, tops)) == 2 and ["7", "8"] in [[c["token"] for c in top] for top in tops]
