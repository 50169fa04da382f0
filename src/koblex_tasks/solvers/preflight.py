"""Before the first sample: is every model the run will call there to be called?

`inspect eval` with no `--model`, with a `vllm/` model and neither vLLM nor a server, or with a base URL where
nothing listens does not fail: it hangs (a client retrying a closed port for 15 minutes) or ends with exit 0
after a traceback. Each task calls `preflight()` when `inspect eval`/`eval()` builds it, so such a run is one
line and exit 1 in seconds. Checked cheaply for the evaluated model and every bound role: a model is given,
a provider that starts its own server is installed, a base URL accepts a TCP connection within
`CONNECT_TIMEOUT` seconds, and a self-hosted server that lists its models (`GET /models`) serves the one
asked for (a wrong name would fail every sample). Credentials and other providers' packages are Inspect's own check when it builds
the model (one line, exit 1). A server that drops mid-run is Inspect's retry business.

A command line's `-S NAME=VALUE` without `--solver` is refused too: Inspect passes `-S` to a `--solver` only, so
the run would silently be the task's default method with its default arguments (`-S select=false` ignored).

The same holds for a retrieving solver given on the command line (`--solver koblex_tasks/legit_rag`), which
Inspect builds after the task, before the first sample: the task notes its retrieval settings
(`note_task_retrieval`) and the solver loads its corpus then (`require_corpus`), so an unreachable hub is one
line, not a traceback in every sample and exit 0.
"""

from __future__ import annotations

import contextvars
import importlib.util
import json
import os
import sys
import urllib.request
from collections.abc import Iterator, Sequence
from urllib.parse import urlsplit

from inspect_ai.model import Model, model_roles

from koblex_tasks._inspect_compat import active_model, pending_base_url, under_inspect_cli
from koblex_tasks.corpus.retriever import RetrieverSettings, get_retriever
from koblex_tasks.errors import DataError, SetupError
from koblex_tasks.hub import HubUnavailableError
from koblex_tasks.judge_role import ROLES_SET_BY_BUILDER, built_by_eval
from koblex_tasks.net import connection_problem
from koblex_tasks.solvers.rejections import watch_rejections

CONNECT_TIMEOUT = 3.0
NO_MODEL = "none/none"  # what Inspect builds for an eval without --model (it fails on the first call)
# Providers that start a local server when given no URL, and the package that server needs.
SELF_SERVING = {"vllm": ("vllm", "VLLM_BASE_URL"), "sglang": ("sglang", "SGLANG_BASE_URL")}


# The retrieval settings of the task the running eval built last (its solvers are built after it).
TASK_RETRIEVAL: contextvars.ContextVar[tuple[str, RetrieverSettings] | None] = contextvars.ContextVar(
    "koblex_task_retrieval", default=None
)


class PreflightError(SetupError, RuntimeError):
    """A model or corpus of the run is not there: the message names it and the fix."""


def preflight() -> None:
    """Refuse the run when a model it will call is not there (a no-op outside an eval's task build)."""
    if not built_by_eval():
        return
    ignored = ignored_solver_args() if under_inspect_cli() else []
    if ignored:
        raise PreflightError(
            f"{' '.join(ignored)}: Inspect passes -S to a --solver only, so this run would ignore it and run the "
            "task's default method with its default arguments: name the method, e.g. "
            f"--solver koblex_tasks/<method> {' '.join(ignored)}"
        )
    watch_rejections()  # a request the server rejects then stops the run in one line
    checked: set[str] = set()
    # A builder that set the roles itself (the grid) builds before any eval: its models are its own to check.
    for flag, model in run_models(evaluated=not ROLES_SET_BY_BUILDER.get()):
        check_model(flag, model, checked)


SOLVER_ARG_OPTIONS = ("-S", "--solver-arg", "--solver-config")


def solver_args_without_solver(argv: Sequence[str]) -> list[str]:
    """The solver arguments (`-S NAME=VALUE`, `--solver-config FILE`) of a command line that names no
    `--solver`, as given; [] when it names one or gives none."""
    if any(a == "--solver" or a.startswith("--solver=") for a in argv):
        return []
    given = []
    for i, token in enumerate(argv):
        if token in SOLVER_ARG_OPTIONS:
            given.append(f"{token} {argv[i + 1]}" if i + 1 < len(argv) else token)
        elif token.startswith(tuple(f"{o}=" for o in SOLVER_ARG_OPTIONS[1:])) or (
            token.startswith("-S") and len(token) > 2
        ):
            given.append(token)
    return given


def ignored_solver_args() -> list[str]:
    """The solver arguments Inspect's CLI was given (command line, or `INSPECT_EVAL_SOLVER_ARGS`) without a
    solver to pass them to (no `--solver`, `INSPECT_EVAL_SOLVER` unset): Inspect drops them."""
    if os.environ.get("INSPECT_EVAL_SOLVER"):
        return []
    from_env = os.environ.get("INSPECT_EVAL_SOLVER_ARGS")
    return solver_args_without_solver(sys.argv[1:]) + ([f"-S {from_env}"] if from_env else [])


def run_models(evaluated: bool = True) -> Iterator[tuple[str, Model]]:
    """(the option that gave it, model) for the evaluated model and each bound role."""
    model = active_model() if evaluated else None
    if model is not None:
        yield "--model ", model
    for role, bound in model_roles().items():
        for each in bound if isinstance(bound, list) else [bound]:
            yield f"--model-role {role}=", each


def base_url_variable(provider: str) -> str:
    """The environment variable a provider's client reads its server from (`OPENAI_BASE_URL`, ...)."""
    return f"{provider.upper().replace('-', '_')}_BASE_URL"


def server_url(model: Model) -> str | None:
    """The server a model talks to: its base URL, the one a lazily connecting provider (vLLM) will use, or
    the `<PROVIDER>_BASE_URL` its client reads itself (the `openai` client's `OPENAI_BASE_URL`, ...)."""
    provider = str(model).split("/", 1)[0]
    return (
        getattr(model.api, "base_url", None)
        or pending_base_url(model.api)
        or os.environ.get(base_url_variable(provider))
        or None
    )


def check_model(flag: str, model: Model, checked: set[str] | None = None) -> None:
    """One model: given at all, its server startable or its base URL reachable (each URL tried once)."""
    name = str(model)
    if name == NO_MODEL:
        raise PreflightError(
            "no model given: add --model <provider>/<model> (e.g. --model openai/gpt-4o, or --model "
            "koblexmock/x for a mock run that calls no model), or set INSPECT_EVAL_MODEL"
        )
    provider = name.split("/", 1)[0]
    url = server_url(model)
    if url is None and provider in SELF_SERVING:
        package, variable = SELF_SERVING[provider]
        url = os.environ.get(variable)
        if url is None and importlib.util.find_spec(package) is None:
            raise PreflightError(
                f"{flag}{name}: {package} is not installed, so Inspect cannot start its server: "
                f"pip install {package} (on a GPU machine), or set {variable}=http://<host>:<port>/v1 "
                "to use a running server"
            )
    if not url or (checked is not None and url in checked):
        return
    if checked is not None:
        checked.add(url)
    require_reachable(url, url_source(url, provider), f"{flag}{name}")
    wanted = served_name(name)
    served = served_models(url, getattr(model.api, "api_key", None)) if wanted else None
    if served and wanted not in served:
        listed = ", ".join(served[:5]) + (", ..." if len(served) > 5 else "")
        raise PreflightError(
            f"{flag}{name}: the server at {url} serves {listed}, not {wanted}: name one of these in the model, "
            "or start the server with this model"
        )


def require_reachable(url: str, source: str, subject: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Refuse the run in one line when nothing listens at `url` (a TCP connection within `timeout` s).

    `source` names where the URL came from (an environment variable, a task argument), `subject` what needs
    it (`--model openai/gpt-4o`, `-T reranker_url=`): the line says both and the fix."""
    problem = unreachable(url, timeout)
    if problem is not None:
        raise PreflightError(
            f"{subject}: cannot connect to {url} ({source}): {problem}; start the server there "
            f"or point {source} at a running one"
        )


def unreachable(url: str, timeout: float = CONNECT_TIMEOUT) -> str | None:
    """Why a TCP connection to the URL's host and port fails, or None when it opens (or a proxy decides)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None  # not a network address we know how to try
    if parts.scheme in urllib.request.getproxies() and not urllib.request.proxy_bypass(parts.hostname):
        return None  # the proxy, not a direct connection, reaches it
    return connection_problem(parts, timeout)


def served_name(name: str) -> str | None:
    """The model id a self-hosted OpenAI-compatible server is asked for (`vllm/<id>`,
    `openai-api/<service>/<id>`); None for other providers, whose servers list what they like."""
    provider, _, rest = name.partition("/")
    if provider == "vllm" and ":" not in rest:  # `base:adapter` asks for the adapter
        return rest
    if provider == "openai-api":
        return rest.partition("/")[2] or None
    return None


def served_models(url: str, api_key: str | None, timeout: float = CONNECT_TIMEOUT) -> list[str] | None:
    """The ids `GET <url>/models` lists (what vLLM and most OpenAI-compatible servers serve); None when the
    server does not say (no such route, not JSON, an error): then the first request tells."""
    request = urllib.request.Request(url.rstrip("/") + "/models")
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            listed = json.loads(response.read())["data"]
        return [str(entry["id"]) for entry in listed] or None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def url_source(url: str, provider: str) -> str:
    """Where the URL came from: the environment variable holding it, else the command line or the provider's
    default (which its `<PROVIDER>_BASE_URL` variable overrides)."""
    for variable, value in sorted(os.environ.items()):
        if variable.endswith("_BASE_URL") and value.rstrip("/") == url.rstrip("/"):
            return variable
    return f"--model-base-url or {base_url_variable(provider)}"


def note_task_retrieval(title: str, settings: RetrieverSettings) -> None:
    """Called by a task built by an eval, for the solvers the eval builds next (`require_corpus`)."""
    if built_by_eval():
        TASK_RETRIEVAL.set((title, settings))


def require_corpus(**overrides: str | None) -> None:
    """Load the corpus a solver will search (the task's settings with the solver's overrides) when the eval
    builds the solver, so a corpus that cannot be loaded refuses the run before the first sample."""
    noted = TASK_RETRIEVAL.get()
    if noted is None or not built_by_eval():
        return
    title, settings = noted
    changes = {k: v for k, v in overrides.items() if v is not None}
    try:
        get_retriever(RetrieverSettings.from_dict({**settings.as_dict(), **changes}))
    except (DataError, HubUnavailableError) as exc:
        raise PreflightError(f"{title}: {exc}") from exc
