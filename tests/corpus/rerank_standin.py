"""A local stand-in for a rerank engine: vLLM's or text-embeddings-inference's routes and shapes, scoring with
the `stub-overlap` formula (so its scores equal the in-process stub's), or answering out of schema on demand.

Used by the rerank tests and by `bench/bench_rerank.py` (the engine path's client and HTTP cost). It checks
each request against its engine's fields and answers 422 to any other field, as a strict server would.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from koblex_tasks.conformance.server import send_json
from koblex_tasks.corpus.rerank import StubOverlapReranker

FIELDS = {"vllm": {"model", "query", "documents"}, "tei": {"query", "texts", "raw_scores"}}
# Ways to answer out of schema (`fault=`): each breaks one field of an otherwise good answer.
FAULTS = ("schema", "nan", "missing", "duplicate", "out_of_range", "string_score", "no_route", "not_json")


@dataclass
class StandIn:
    engine: str = "vllm"
    model: str = "stub-overlap"
    fault: str | None = None
    fault_after: int = 0  # good answers before the fault starts (1: the probe passes, the run's first fails)
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""

    def answer(self, body: dict[str, Any]) -> tuple[int, Any]:
        if set(body) - FIELDS[self.engine]:
            return 422, {"error": f"unknown fields {sorted(set(body) - FIELDS[self.engine])}"}
        documents = body["documents"] if self.engine == "vllm" else body["texts"]
        scores = StubOverlapReranker().scores(body["query"], documents)
        fault = self.fault if len(self.requests) > self.fault_after else None
        if fault == "no_route":  # a server with no rerank route (a chat model's, say)
            return 404, {"detail": "Not Found"}
        name = "relevance_score" if self.engine == "vllm" else "score"
        entries: list[dict[str, Any]] = [{"index": i, name: s} for i, s in enumerate(scores)]
        entries.sort(key=lambda e: -e[name])  # engines answer best first
        if fault == "nan":
            entries[0][name] = float("nan")
        elif fault == "missing":
            entries.pop()
        elif fault == "duplicate":
            entries[-1]["index"] = entries[0]["index"]
        elif fault == "out_of_range":
            entries[0]["index"] = len(documents)
        elif fault == "string_score":
            entries[0][name] = "0.5"
        if self.engine == "tei":
            return 200, {"ranks": entries} if fault == "schema" else entries
        if fault == "schema":
            return 200, {"data": [{"index": e["index"], "score": e[name]} for e in entries]}
        return 200, {"id": "rerank-0", "model": self.model, "results": entries, "usage": {"total_tokens": 0}}


def _handler(standin: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: Any) -> None:
            send_json(self, status, body, allow_nan=True)

        def do_GET(self) -> None:
            if standin.engine == "tei" and self.path == "/info":
                self._send(
                    200, {"model_id": standin.model, "model_sha": "abc123", "model_type": {"reranker": {}}}
                )
            elif standin.engine == "vllm" and self.path in ("/v1/models", "/models"):
                self._send(200, {"object": "list", "data": [{"id": standin.model, "object": "model"}]})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            routes = ("/rerank", "/v1/rerank") if standin.engine == "vllm" else ("/rerank",)
            if self.path not in routes:
                self._send(404, {"error": "not found"})
                return
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            standin.requests.append(body)
            status, answer = standin.answer(body)
            if standin.fault == "not_json" and len(standin.requests) > standin.fault_after:
                self._send_text(200, "<html>rerank</html>")
            else:
                self._send(status, answer)

        def _send_text(self, status: int, text: str) -> None:
            data = text.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def rerank_standin(
    engine: str = "vllm", model: str = "stub-overlap", fault: str | None = None, fault_after: int = 0
) -> Iterator[StandIn]:
    """A stand-in engine on a free local port for the block; `base_url` is what `-T reranker_url=` takes."""
    standin = StandIn(engine, model, fault, fault_after)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(standin))
    server.daemon_threads = True
    suffix = "/v1" if engine == "vllm" else ""
    standin.base_url = f"http://127.0.0.1:{server.server_address[1]}{suffix}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield standin
    finally:
        server.shutdown()
        server.server_close()
