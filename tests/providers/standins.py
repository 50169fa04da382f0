"""Local stand-ins for the servers a user names, on 127.0.0.1, each recording what it receives.

- `strict_openai`: the hosted OpenAI Chat Completions API as strict as the real one. Every body is validated
  against `CreateChatCompletionRequest` of the official OpenAPI document (`$KOBLEX_SHARED_DATA/providers/
  openai-chat-completions.schema.json`, with `jsonschema`); a top-level property the schema does not list is
  HTTP 400 "Unrecognized request argument supplied: <name>" (`invalid_request_error`), as the API answers.
- `strict_anthropic`: the Anthropic Messages API (`POST /v1/messages`) written from its public API reference:
  required `model`, `max_tokens`, `messages`; the request parameters it lists and no others (400
  "<name>: Extra inputs are not permitted"); temperature and top_p within [0, 1].
- `strict_google`: the Gemini API (`POST /<version>/models/{model}:generateContent`) written from its public API
  reference: the request's, `generationConfig`'s, `Content`'s and `Part`'s fields and no others (400 "Invalid JSON
  payload received. Unknown name ..."), `generationConfig` values in their documented ranges (temperature 0-2,
  at most 5 stop sequences, at most 20 top logprobs, ...); replies in Gemini's shape (candidates, usageMetadata,
  logprobsResult when asked).
- `lenient_vllm`: a vLLM-like OpenAI-compatible server that takes anything (as vLLM takes its extensions).

All answer by the conformance responder (`koblex_tasks.conformance.server.completion`), so every KoBLEX method
gets replies it can parse, and serve `GET /v1/models`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from koblex_tasks.conformance.responder import token_logprob
from koblex_tasks.conformance.server import QuietJsonHandler, completion, serving

Reply = tuple[int, dict[str, Any]]
Route = Callable[[str, dict[str, Any]], Reply]


@dataclass
class Received:
    path: str
    body: dict[str, Any]
    status: int
    error: str | None


@dataclass
class StandIn:
    """A running stand-in: its base URL and every request it received (accepted or rejected)."""

    base_url: str
    received: list[Received] = field(default_factory=list)

    @property
    def accepted(self) -> list[dict[str, Any]]:
        return [r.body for r in self.received if r.status == 200]

    @property
    def rejected(self) -> list[Received]:
        return [r for r in self.received if r.status != 200]


@contextmanager
def serve(route: Route, models: list[str]) -> Iterator[StandIn]:
    """Serve `route` on an ephemeral loopback port until the block ends."""
    received: list[Received] = []
    with serving(_handler(route, models, threading.Lock(), received)) as port:
        yield StandIn(f"http://127.0.0.1:{port}/v1", received)


def _handler(route: Route, models: list[str], lock: threading.Lock, received: list[Received]) -> type:
    class Handler(QuietJsonHandler):
        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                listed = [{"id": m, "object": "model", "type": "model", "display_name": m} for m in models]
                self._send(200, {"object": "list", "data": listed, "has_more": False})
            else:
                self._send(404, {"error": {"message": f"not served: {self.path}"}})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw or b"{}")
                status, payload = route(self.path, body)
            except json.JSONDecodeError as exc:
                body, status, payload = {}, 400, {"error": {"message": f"not JSON: {exc}"}}
            error = None if status == 200 else json.dumps(payload)
            with lock:
                received.append(Received(self.path, body, status, error))
            self._send(status, payload)

    return Handler


# --- OpenAI Chat Completions -------------------------------------------------------------------------------


def openai_validator(schema_file: Path) -> tuple[Draft202012Validator, frozenset[str]]:
    """A validator of `CreateChatCompletionRequest` and the top-level properties it lists (through `allOf`)."""
    document = json.loads(schema_file.read_text(encoding="utf-8"))
    schemas = document["components"]["schemas"]

    def properties(node: dict[str, Any]) -> set[str]:
        if "$ref" in node:
            return properties(schemas[node["$ref"].rsplit("/", 1)[-1]])
        found = set(node.get("properties", {}))
        for part in node.get("allOf", []):
            found |= properties(part)
        return found

    root = {**document, "$ref": "#/components/schemas/CreateChatCompletionRequest"}
    listed = frozenset(properties(schemas["CreateChatCompletionRequest"]))
    return Draft202012Validator(root), listed


def openai_error(message: str, param: str | None = None) -> Reply:
    return 400, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}


def openai_route(schema_file: Path, model: str) -> Route:
    validator, listed = openai_validator(schema_file)

    def route(path: str, body: dict[str, Any]) -> Reply:
        if not path.rstrip("/").endswith("/chat/completions"):
            return 404, {"error": {"message": f"Invalid URL (POST {path})", "type": "invalid_request_error"}}
        unknown = sorted(set(body) - listed)
        if unknown:
            return openai_error(f"Unrecognized request argument supplied: {unknown[0]}")
        error = next(iter(sorted(validator.iter_errors(body), key=str)), None)
        if error is not None:
            where = ".".join(str(p) for p in error.absolute_path) or None
            return openai_error(f"Invalid request: {error.message}", where)
        if body["model"] != model:
            return 404, {
                "error": {
                    "message": f"The model `{body['model']}` does not exist",
                    "type": "invalid_request_error",
                }
            }
        return 200, judged(body, completion(body, model))

    return route


def judged(body: dict[str, Any], chat: dict[str, Any]) -> dict[str, Any]:
    """The chat completion with a G-Eval judge's verdict (and its top logprobs) when the request asks for one."""
    text = judge_reply(list(body.get("messages") or []))
    if text is None:
        return chat
    choice = chat["choices"][0]
    choice["message"]["content"] = text
    if body.get("logprobs"):
        top = [alternatives(c, int(body.get("top_logprobs") or 0)) for c in text]
        choice["logprobs"] = {
            "content": [
                {
                    "token": c,
                    "logprob": token_logprob(c),
                    "bytes": list(c.encode()),
                    "top_logprobs": [
                        {
                            "token": t["token"],
                            "logprob": t["logProbability"],
                            "bytes": list(t["token"].encode()),
                        }
                        for t in tops
                    ],
                }
                for c, tops in zip(text, top, strict=True)
            ]
        }
    return chat


@contextmanager
def strict_openai(schema_file: Path, models: tuple[str, ...] = ("gpt-4o",)) -> Iterator[StandIn]:
    routes = {m: openai_route(schema_file, m) for m in models}

    def route(path: str, body: dict[str, Any]) -> Reply:
        chosen = routes.get(str(body.get("model")), routes[models[0]])
        return chosen(path, body)

    with serve(route, list(models)) as stand_in:
        yield stand_in


# --- Anthropic Messages ------------------------------------------------------------------------------------

# POST /v1/messages body parameters as the API reference lists them.
ANTHROPIC_MESSAGES = {
    "type": "object",
    "required": ["model", "max_tokens", "messages"],
    "properties": {
        "model": {"type": "string"},
        "max_tokens": {"type": "integer", "minimum": 1},
        "messages": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["role", "content"],
                "properties": {
                    "role": {"enum": ["user", "assistant"]},
                    "content": {"type": ["string", "array"]},
                },
                "additionalProperties": False,
            },
        },
        "system": {"type": ["string", "array"]},
        "temperature": {"type": "number", "minimum": 0, "maximum": 1},
        "top_p": {"type": "number", "minimum": 0, "maximum": 1},
        "top_k": {"type": "integer", "minimum": 0},
        "stop_sequences": {"type": "array", "items": {"type": "string"}},
        "stream": {"type": "boolean"},
        "metadata": {"type": "object"},
        "service_tier": {"enum": ["auto", "standard_only"]},
        "thinking": {"type": "object"},
        "tools": {"type": "array"},
        "tool_choice": {"type": "object"},
        "container": {"type": ["string", "object", "null"]},
        "context_management": {"type": ["object", "null"]},
        "mcp_servers": {"type": "array"},
        "output_config": {"type": "object"},
        "inference_geo": {"type": ["string", "null"]},
        "cache_control": {"type": ["object", "null"]},
    },
}
ANTHROPIC_VALIDATOR = Draft202012Validator(ANTHROPIC_MESSAGES)


def anthropic_error(message: str) -> Reply:
    return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def anthropic_route(path: str, body: dict[str, Any]) -> Reply:
    if not path.rstrip("/").endswith("/messages"):
        return 404, {"type": "error", "error": {"type": "not_found_error", "message": f"Not found: {path}"}}
    unknown = sorted(set(body) - set(ANTHROPIC_MESSAGES["properties"]))  # type: ignore[arg-type]
    if unknown:
        return anthropic_error(f"{unknown[0]}: Extra inputs are not permitted")
    error = next(iter(sorted(ANTHROPIC_VALIDATOR.iter_errors(body), key=str)), None)
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path)
        return anthropic_error(f"{where}: {error.message}")
    system = body.get("system") or ""
    if isinstance(system, list):
        system = "\n".join(str(block.get("text", "")) for block in system)
    messages = [{"role": "system", "content": system}] if system else []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, list):
            content = "".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
        messages.append({"role": message["role"], "content": content})
    chat = completion({"messages": messages, "stop": body.get("stop_sequences")}, body["model"])
    text = chat["choices"][0]["message"]["content"]
    return 200, {
        "id": f"msg_standin{int(time.time() * 1000)}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": chat["usage"]["prompt_tokens"], "output_tokens": len(text)},
    }


@contextmanager
def strict_anthropic(models: tuple[str, ...] = ("claude-sonnet-4-5",)) -> Iterator[StandIn]:
    with serve(anthropic_route, list(models)) as stand_in:
        yield stand_in


# --- vLLM-like ---------------------------------------------------------------------------------------------


@contextmanager
def lenient_vllm(model: str) -> Iterator[StandIn]:
    def route(path: str, body: dict[str, Any]) -> Reply:
        return 200, completion(body, model)

    with serve(route, [model]) as stand_in:
        yield stand_in


# --- Google Gemini generateContent -------------------------------------------------------------------------

# POST /v1beta/models/{model}:generateContent as the Gemini API reference lists it: the request body's fields,
# GenerationConfig's, Content's and Part's. Any other name is Google's HTTP 400 "Unknown name".
GEMINI_REQUEST = frozenset(
    {
        "contents",
        "tools",
        "toolConfig",
        "safetySettings",
        "systemInstruction",
        "generationConfig",
        "cachedContent",
    }
)
GEMINI_GENERATION_CONFIG = {
    "type": "object",
    "properties": {
        "stopSequences": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
        "responseMimeType": {"type": "string"},
        "responseSchema": {"type": "object"},
        "responseJsonSchema": {},
        "_responseJsonSchema": {},
        "responseModalities": {"type": "array", "items": {"enum": ["TEXT", "IMAGE", "AUDIO"]}},
        "candidateCount": {"type": "integer", "minimum": 1, "maximum": 8},
        "maxOutputTokens": {"type": "integer", "minimum": 1},
        "temperature": {"type": "number", "minimum": 0, "maximum": 2},
        "topP": {"type": "number", "minimum": 0, "maximum": 1},
        "topK": {"type": "integer", "minimum": 1},
        "seed": {"type": "integer"},
        "presencePenalty": {"type": "number"},
        "frequencyPenalty": {"type": "number"},
        "responseLogprobs": {"type": "boolean"},
        "logprobs": {"type": "integer", "minimum": 0, "maximum": 20},
        "enableEnhancedCivicAnswers": {"type": "boolean"},
        "speechConfig": {"type": "object"},
        "thinkingConfig": {"type": "object"},
        "imageConfig": {"type": "object"},
        "mediaResolution": {"type": "string"},
    },
}
GEMINI_THINKING = frozenset({"includeThoughts", "thinkingBudget", "thinkingLevel"})
GEMINI_CONTENT = frozenset({"parts", "role"})
GEMINI_PART = frozenset(
    {
        "text", "inlineData", "functionCall", "functionResponse", "fileData", "executableCode",
        "codeExecutionResult", "thought", "thoughtSignature", "partMetadata", "videoMetadata",
    }
)  # fmt: skip
GEMINI_GENERATION_VALIDATOR = Draft202012Validator(GEMINI_GENERATION_CONFIG)
# The reference documents v1beta; google-genai >= 3 calls v1 unless told (GOOGLE_GENAI_API_VERSION): both served.
GEMINI_VERSIONS = frozenset({"v1", "v1beta"})


def gemini_error(message: str, code: int = 400, status: str = "INVALID_ARGUMENT") -> Reply:
    return code, {"error": {"code": code, "message": message, "status": status}}


def _camel(name: str) -> str:
    """The JSON name of a proto field: Google's parser takes `generation_config` and `generationConfig` alike."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def gemini_unknown(body: dict[str, Any]) -> str | None:
    """Google's message for the first name outside the request's, GenerationConfig's, Content's or Part's fields."""
    checks: list[tuple[str, Any, frozenset[str]]] = [("", body, GEMINI_REQUEST)]
    config = body.get("generationConfig", body.get("generation_config"))
    if isinstance(config, dict):
        checks.append(("generation_config", config, frozenset(GEMINI_GENERATION_CONFIG["properties"])))  # type: ignore[arg-type]
        thinking = config.get("thinkingConfig", config.get("thinking_config"))
        if isinstance(thinking, dict):
            checks.append(("generation_config.thinking_config", thinking, GEMINI_THINKING))
    system = body.get("systemInstruction", body.get("system_instruction"))
    contents = [("system_instruction", system)] if isinstance(system, dict) else []
    contents += [
        (f"contents[{i}]", c) for i, c in enumerate(body.get("contents") or []) if isinstance(c, dict)
    ]
    for where, content in contents:
        checks.append((where, content, GEMINI_CONTENT))
        parts = content.get("parts") or []
        checks += [
            (f"{where}.parts[{j}]", p, GEMINI_PART) for j, p in enumerate(parts) if isinstance(p, dict)
        ]
    for where, node, listed in checks:
        unknown = sorted(name for name in node if _camel(name) not in listed)
        if unknown:
            at = f" at '{where}'" if where else ""
            return f'Invalid JSON payload received. Unknown name "{unknown[0]}"{at}: Cannot find field.'
    return None


def gemini_generation_config(body: dict[str, Any]) -> dict[str, Any]:
    config = body.get("generationConfig", body.get("generation_config")) or {}
    return {_camel(k): v for k, v in config.items()}


def gemini_invalid(body: dict[str, Any]) -> str | None:
    """Google's message for a value out of its field's range (after the names passed)."""
    config = gemini_generation_config(body)
    error = next(iter(sorted(GEMINI_GENERATION_VALIDATOR.iter_errors(config), key=str)), None)
    if error is not None:
        where = ".".join(_snake(str(p)) for p in error.absolute_path)
        return f"Invalid value at 'generation_config.{where}': {error.message}"
    if "logprobs" in config and not config.get("responseLogprobs"):
        return "logprobs is only valid if response_logprobs is true"
    if not body.get("contents"):
        return "* GenerateContentRequest.contents: contents is not specified"
    return None


def _gemini_text(content: dict[str, Any]) -> str:
    return "".join(str(p.get("text", "")) for p in content.get("parts") or [] if not p.get("thought"))


def judge_reply(messages: list[dict[str, Any]]) -> str | None:
    """A G-Eval judge's JSON verdict when the request asks for one (DeepEval's prompt ends in "JSON:"): the
    conformance responder answers the methods' prompts, not the judge's."""
    last = str(messages[-1]["content"]) if messages else ""
    return '{"score": 7, "reason": "stand-in"}' if last.rstrip().endswith("JSON:") else None


def alternatives(token: str, wanted: int) -> list[dict[str, Any]]:
    """The top candidates at one position, best first, at most `wanted`: the chosen token, then for a digit
    the digits either side (so a logprob-weighted score differs from the stated one)."""
    found = [(token, token_logprob(token))]
    if token.isdigit():
        found += [
            (str(d), lp)
            for d, lp in ((int(token) + 1, found[0][1] - 1), (int(token) - 1, -4.0))
            if 0 <= d <= 9
        ]
    return [{"token": t, "logProbability": lp} for t, lp in found[:wanted]]


def gemini_route(models: tuple[str, ...]) -> Route:
    def route(path: str, body: dict[str, Any]) -> Reply:
        version, _, rest = path.lstrip("/").partition("/models/")
        model, _, method = rest.partition(":")
        if version not in GEMINI_VERSIONS or method != "generateContent":
            return gemini_error(f"Method not found: {path}", 404, "NOT_FOUND")
        if model not in models:
            return gemini_error(f"models/{model} is not found for API version {version}", 404, "NOT_FOUND")
        problem = gemini_unknown(body) or gemini_invalid(body)
        if problem is not None:
            return gemini_error(problem)
        config = gemini_generation_config(body)
        system = body.get("systemInstruction", body.get("system_instruction"))
        messages = [{"role": "system", "content": _gemini_text(system)}] if isinstance(system, dict) else []
        messages += [
            {"role": "assistant" if c.get("role") == "model" else "user", "content": _gemini_text(c)}
            for c in body["contents"]
        ]
        chat = completion({"messages": messages, "stop": config.get("stopSequences")}, model)
        text = judge_reply(messages) or chat["choices"][0]["message"]["content"]
        candidate: dict[str, Any] = {
            "content": {"parts": [{"text": text}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
        }
        if config.get("responseLogprobs"):
            chosen = [{"token": c, "logProbability": token_logprob(c)} for c in text]
            top = [{"candidates": alternatives(c, config.get("logprobs", 0))} for c in text]
            candidate["logprobsResult"] = {"chosenCandidates": chosen, "topCandidates": top}
        usage = chat["usage"]
        return 200, {
            "candidates": [candidate],
            "usageMetadata": {
                "promptTokenCount": usage["prompt_tokens"],
                "candidatesTokenCount": usage["completion_tokens"],
                "totalTokenCount": usage["total_tokens"],
            },
            "modelVersion": model,
            "responseId": f"standin{int(time.time() * 1000)}",
        }

    return route


@contextmanager
def strict_google(models: tuple[str, ...] = ("gemini-2.5-flash",)) -> Iterator[StandIn]:
    """The Gemini API; its `base_url` is the root `GOOGLE_BASE_URL` takes (the client adds `/<version>/...`)."""
    with serve(gemini_route(models), list(models)) as stand_in:
        stand_in.base_url = stand_in.base_url.removesuffix("/v1")
        yield stand_in
