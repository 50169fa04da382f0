"""The rerank stage on a serving engine: `-T reranker_url=<base url>` with the model named by `-T reranker=`.

Two request shapes exist for the same cross-encoder, and the engine is found out before the first sample
(`probe_server`), so no request carries a field its server does not define:

- vLLM (`vllm serve <cross-encoder>`), and the Jina/Cohere-compatible servers: `POST <base>/rerank` with
  `{"model", "query", "documents"}`, answered by `{"results": [{"index", "relevance_score"}, ...]}`. vLLM lists
  its models at `GET <base>/models` (or `<base>/v1/models`).
- Hugging Face text-embeddings-inference (TEI): `POST <base>/rerank` with `{"query", "texts", "raw_scores":
  false}`, answered by `[{"index", "score"}, ...]`; `GET <base>/info` names the one model it serves.

Both apply the sigmoid to the classifier's logit for a one-label cross-encoder (TEI with `raw_scores` false),
as the official code does. An answer of another shape, a score that is not a finite number or indices that do
not cover the documents exactly once is refused with one line naming the server and the first bad field: the
stage never falls back to the first-stage order.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from koblex_tasks.errors import SetupError
from koblex_tasks.net import connection_problem

REACH_TIMEOUT = 15.0  # the whole check of a URL where nothing listens: one line within this
REQUEST_TIMEOUT = 600.0  # one rerank request of a busy engine (100 pairs of a large model on a shared GPU)
ENGINES = ("vllm", "tei")
PROBE_QUERY = "probe"
PROBE_DOCUMENTS = ("a", "b c")


class RerankServerError(SetupError, RuntimeError):
    """A rerank server that is not there, does not serve the model, or answers out of schema: one line."""


@dataclass(frozen=True)
class ServerInfo:
    """What the probe found: the engine (its request shape), the served model and its revision if told."""

    url: str
    engine: str
    model: str
    revision: str | None = None


def refused_connection(url: str, timeout: float) -> str | None:
    """Why a TCP connection to the URL's host and port fails within `timeout` s, or None when it opens."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"'{url}' is not an http(s) URL"
    return connection_problem(parts, timeout)


def _get_json(url: str, timeout: float) -> Any | None:
    """The JSON body of `GET url`, or None when there is no such route or it is not JSON."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return json.loads(response.read())
    except (OSError, ValueError):
        return None


def _post_json(url: str, body: dict[str, object], timeout: float) -> Any:
    """The JSON answer to `POST url`; an HTTP error, an unreachable server or a non-JSON body is one line."""
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:200].decode("utf-8", "replace").replace("\n", " ")
        raise RerankServerError(f"rerank server {url}: HTTP {exc.code}: {detail}") from exc
    except OSError as exc:
        raise RerankServerError(f"rerank server {url}: {exc}") from exc
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise RerankServerError(f"rerank server {url}: the answer is not JSON") from exc


def _served_models(base: str, timeout: float) -> list[str] | None:
    """The ids an OpenAI-style `GET /models` lists (vLLM), under the base or under `<base>/v1`."""
    for route in ("/models", "/v1/models"):
        if route == "/v1/models" and base.endswith("/v1"):
            continue
        body = _get_json(base + route, timeout)
        if isinstance(body, dict) and isinstance(body.get("data"), list):
            return [str(entry.get("id")) for entry in body["data"] if isinstance(entry, dict)]
    return None


def probe_server(url: str, model: str, timeout: float = 3.0) -> ServerInfo:
    """Which engine answers at `url` and that it serves `model`, then one two-document rerank through the
    client's own parser: a server of another schema fails here, before the first sample."""
    base = url.rstrip("/")
    started = time.monotonic()
    problem = refused_connection(base, timeout=min(timeout, REACH_TIMEOUT))
    if problem is not None:
        raise RerankServerError(
            f"-T reranker_url={url}: cannot connect ({problem}); start the rerank server there "
            "(vllm serve <model> or text-embeddings-inference) or drop -T reranker_url to rerank in process"
        )
    info = _get_json(base + "/info", timeout)
    if isinstance(info, dict) and isinstance(info.get("model_id"), str):
        served: list[str] = [info["model_id"]]
        engine, revision = "tei", info.get("model_sha")
    else:
        listed = _served_models(base, timeout)
        if listed is None:
            raise RerankServerError(
                f"-T reranker_url={url}: neither GET /info (text-embeddings-inference) nor GET /models (vLLM) "
                "answers there: is it a rerank server?"
            )
        served, engine, revision = listed, "vllm", None
    if model not in served:
        shown = ", ".join(served[:5]) + (", ..." if len(served) > 5 else "")
        raise RerankServerError(
            f"-T reranker_url={url}: the server serves {shown or 'no model'}, not {model}: name one of these "
            "with -T reranker=, or start the server with this model"
        )
    found = ServerInfo(base, engine, model, str(revision) if revision else None)
    ServerReranker(found).scores(PROBE_QUERY, PROBE_DOCUMENTS)
    if time.monotonic() - started > REACH_TIMEOUT:
        raise RerankServerError(f"-T reranker_url={url}: the server took over {REACH_TIMEOUT:g} s to answer")
    return found


def parse_scores(server: str, engine: str, body: Any, n: int) -> list[float]:
    """The scores of `n` documents in their order, from an engine's answer; the first bad field is refused."""
    if engine == "vllm":
        if not isinstance(body, dict) or not isinstance(body.get("results"), list):
            raise RerankServerError(f"rerank server {server}: results: missing or not a list")
        entries, score_field = body["results"], "relevance_score"
        where = "results"
    else:
        if not isinstance(body, list):
            raise RerankServerError(f"rerank server {server}: the answer is not a list of ranks")
        entries, score_field, where = body, "score", ""
    scores: list[float | None] = [None] * n
    for position, entry in enumerate(entries):
        field = f"{where}[{position}]"
        if not isinstance(entry, dict):
            raise RerankServerError(f"rerank server {server}: {field}: not an object")
        index, score = entry.get("index"), entry.get(score_field)
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n:
            raise RerankServerError(
                f"rerank server {server}: {field}.index: {index!r} is not a document index"
            )
        if scores[index] is not None:
            raise RerankServerError(f"rerank server {server}: {field}.index: document {index} ranked twice")
        if not isinstance(score, int | float) or isinstance(score, bool) or not math.isfinite(score):
            raise RerankServerError(
                f"rerank server {server}: {field}.{score_field}: {score!r} is not a finite number"
            )
        scores[index] = float(score)
    missing = [i for i, s in enumerate(scores) if s is None]
    if missing:
        raise RerankServerError(
            f"rerank server {server}: {where or 'ranks'}: document {missing[0]} of {n} has no score"
        )
    return [s for s in scores if s is not None]


class ServerReranker:
    """Scores (query, passage) pairs with a rerank engine; concurrent samples send concurrent requests (the
    engine batches them itself)."""

    name = "rerank-server"

    def __init__(self, info: ServerInfo) -> None:
        self.info = info

    def config(self) -> dict[str, object]:
        return {
            "name": self.name,
            "engine": self.info.engine,
            "model": self.info.model,
            "url": self.info.url,
            "revision": self.info.revision,
        }

    def body(self, query: str, passages: Sequence[str]) -> dict[str, object]:
        """The request in the engine's own shape (and only its fields)."""
        if self.info.engine == "vllm":
            return {"model": self.info.model, "query": query, "documents": list(passages)}
        return {"query": query, "texts": list(passages), "raw_scores": False}

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        answer = _post_json(self.info.url + "/rerank", self.body(query, passages), REQUEST_TIMEOUT)
        return parse_scores(self.info.url, self.info.engine, answer, len(passages))
