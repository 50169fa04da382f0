"""A local OpenAI-compatible server answering with the fixtures' responder and recording every request.

Stdlib `http.server` in a daemon thread on 127.0.0.1 (an ephemeral port). It is bounded: it serves at most
`max_requests` requests and shuts itself down after `lifetime` seconds, so a hung run cannot leave it
behind. `/v1/chat/completions` answers by the responder's rule (logprobs, when asked, by its rule too);
`/v1/models` and `/health` exist for providers that probe a running server first.
"""

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from koblex_tasks.conformance.responder import request_text, respond, token_logprob

DEFAULT_LIFETIME = 1800.0  # seconds; a conformance run of one folder takes a few minutes
DEFAULT_MAX_REQUESTS = 100_000


@dataclass
class Recorded:
    """One request as received: its JSON body and its headers."""

    body: dict[str, Any]
    headers: dict[str, str]
    received: float


@dataclass
class _State:
    model: str
    max_requests: int
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def completion(body: dict[str, Any], model: str) -> dict[str, Any]:
    """The chat completion the responder gives for a request body."""
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    reply, _ = respond(request_text(list(body.get("messages") or [])), stops)
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": reply},
        "finish_reason": "stop",
        "logprobs": None,
    }
    if body.get("logprobs"):
        choice["logprobs"] = {
            "content": [
                {"token": c, "logprob": token_logprob(c), "bytes": list(c.encode()), "top_logprobs": []}
                for c in reply
            ]
        }
    prompt_tokens = len(request_text(list(body.get("messages") or [])))
    return {
        "id": f"chatcmpl-conformance-{int(time.time() * 1000)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(reply),
            "total_tokens": prompt_tokens + len(reply),
        },
    }


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any, allow_nan: bool = False) -> None:
    """Answer a request with a JSON body (the local stand-in servers' one way to reply)."""
    data = json.dumps(payload, ensure_ascii=False, allow_nan=allow_nan).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class QuietJsonHandler(BaseHTTPRequestHandler):
    """The stand-in servers' request handler base: quiet (what they record is the log), replies in JSON."""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the recorded requests are the log."""

    def _send(self, status: int, payload: Any) -> None:
        send_json(self, status, payload)


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[int]:
    """Serve `handler` on an ephemeral loopback port from a daemon thread until the block ends; yields the port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def _handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietJsonHandler):
        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": state.model, "object": "model"}]})
            else:
                self._send(200, {"status": "ok"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError as exc:
                self._send(400, {"error": {"message": f"not JSON: {exc}"}})
                return
            with state.lock:
                if len(state.requests) >= state.max_requests:
                    self._send(429, {"error": {"message": "conformance server: request limit reached"}})
                    return
                state.requests.append(Recorded(body, dict(self.headers.items()), time.time()))
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"not served: {self.path}"}})
                return
            self._send(200, completion(body, state.model))

    return Handler


class ResponderServer:
    """`with ResponderServer() as server:` serves on `server.base_url` until the block ends (or its lifetime)."""

    def __init__(
        self,
        model: str = "conformance",
        lifetime: float = DEFAULT_LIFETIME,
        max_requests: int = DEFAULT_MAX_REQUESTS,
        port: int = 0,
    ) -> None:
        """`port` 0: an ephemeral one."""
        self._state = _State(model, max_requests)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self._state))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="conformance-server", daemon=True
        )
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[Recorded]:
        with self._state.lock:
            return list(self._state.requests)

    def start(self) -> "ResponderServer":
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        self._timer.cancel()
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "ResponderServer":
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
