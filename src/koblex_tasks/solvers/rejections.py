"""A request the model's server rejects (HTTP 4xx) stops an `inspect eval` run in one line with a non-zero exit;
so does a setup error of ours raised inside a sample (a rerank engine answering out of schema mid-run).

Inspect records such a sample error, fails the eval (its default `fail_on_error`), prints the provider client's
traceback and exits 0 (`inspect eval` reports success whatever the log's status; only `eval-set` says). A
rejected request will be rejected again: it is the setup's problem (a field the server does not take, a model it
does not serve, a key it refuses), so the run is refused the way a setup error is. The hooks below see the
sample's error when it ends: they print the server's message as one line (stderr) and quiet the console so
Inspect's traceback panel does not follow; when the run ends, they exit 1 under Inspect's CLI (a Python
`eval()` caller gets its logs back, the error in them, as before). The log is written as usual.

The hooks are registered when a task of ours is first built (`watch_rejections`, from `preflight`), not when
the plugin loads: Inspect announces the hooks it finds at start-up ("hooks enabled: 1") on every run, and
looks hooks up again at each event.
"""

from __future__ import annotations

import ast
import pydoc
import re
import sys

import rich
from inspect_ai.hooks import Hooks, RunEnd, SampleEnd, hooks

from koblex_tasks._inspect_compat import under_inspect_cli
from koblex_tasks.errors import SetupError

# How the provider clients word an HTTP error: openai's "Error code: 400 - <body or message>" (in the error's
# message); anthropic's "anthropic.BadRequestError: 400 <message> (path: …)" and google-genai's
# "google.genai.errors.ClientError: 400 INVALID_ARGUMENT. {<body>}" (a line of the traceback).
STATUS_ERRORS = (
    re.compile(r"Error code: (4\d\d) - (.*)", re.DOTALL),
    re.compile(r"^[\w.]*Error: (4\d\d) (.+)$", re.MULTILINE),
)
RETRIED = frozenset({408, 409, 429})  # timeouts, conflicts and rate limits: the client's retry business


def rejection_line(error_message: str, model: str | None = None, traceback: str = "") -> str | None:
    """One line for a 4xx the server answered (its own message), or None for any other error; the error's
    message is read first, then its traceback."""
    texts = (error_message, traceback)
    found = next((m for t in texts for p in STATUS_ERRORS if (m := p.search(t)) is not None), None)
    if found is None:
        return None
    status_text, body = found.groups()
    if int(status_text) in RETRIED:
        return None
    status, detail = int(status_text), _server_message(body.strip())
    who = f"{model}: " if model else ""
    return (
        f"{who}the server rejected the request (HTTP {status}): {detail}; nothing was retried, fix the setup "
        "(model, base URL, -M/-T arguments) and run again"
    )


def setup_error_line(traceback: str) -> str | None:
    """The message of a `SetupError` of ours that ended a sample (the traceback's last line names its class),
    or None: such an error will recur on every sample (a rerank engine that answers out of schema)."""
    last = traceback.rstrip().rsplit("\n", 1)[-1]
    name, _, message = last.partition(": ")
    if not name.startswith("koblex_tasks.") or not message:
        return None
    found = pydoc.locate(name)
    return message if isinstance(found, type) and issubclass(found, SetupError) else None


# google-genai puts the status name before the body it prints: "INVALID_ARGUMENT. {'error': {...}}".
STATUS_NAME = re.compile(r"^[A-Z][A-Z_]*\. (?=\{)")


def _server_message(body: str) -> str:
    """The `message` of an error body the client printed as a dict (OpenAI's, Anthropic's and Google's shapes:
    `{"error": {"message": ...}}`, Google's after its status name)."""
    body = STATUS_NAME.sub("", body, count=1)
    try:
        parsed = ast.literal_eval(body)
    except (ValueError, SyntaxError):
        return " ".join(body.split())
    error = parsed.get("error", parsed) if isinstance(parsed, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return " ".join(str(message if message is not None else body).split())


class RejectedRequests(Hooks):
    """Remembers the runs a rejected request stopped (by run id) and exits 1 when such a run ends."""

    def __init__(self) -> None:
        self.rejected: dict[str, str] = {}

    async def on_sample_end(self, data: SampleEnd) -> None:
        error = data.sample.error
        if error is None or data.run_id in self.rejected:
            return
        line = rejection_line(error.message, _sample_model(data), error.traceback) or setup_error_line(
            error.traceback
        )
        if line is None:
            return
        self.rejected[data.run_id] = line
        sys.stderr.write(f"{line}\n")
        sys.stderr.flush()
        if under_inspect_cli():
            rich.get_console().quiet = True  # Inspect's traceback panel of the same error would follow

    async def on_run_end(self, data: RunEnd) -> None:
        if (
            self.rejected.pop(data.run_id, None) is not None
            and data.exception is None
            and under_inspect_cli()
        ):
            raise SystemExit(1)  # a BaseException: Inspect's hook guard lets it through, the CLI exits 1


def _sample_model(data: SampleEnd) -> str | None:
    """The model whose request was rejected: the last model call of the sample, if it logged one."""
    for event in reversed(data.sample.events):
        model = getattr(event, "model", None)
        if getattr(event, "event", None) == "model" and model:
            role = getattr(event, "role", None)
            return f"--model-role {role}={model}" if role else f"--model {model}"
    return None


_WATCHING: list[type[Hooks]] = []


def watch_rejections() -> None:
    """Register the hooks (once per process)."""
    if not _WATCHING:
        register = hooks(name="koblex_rejected_requests", description="a rejected request stops the run")
        _WATCHING.append(register(RejectedRequests))
