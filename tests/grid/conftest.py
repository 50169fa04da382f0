"""A grid run on the shared data with a scripted model that fails mid-run the first time, then resumed.

`flaky/<name>` answers as koblexmock, with one scripted outage: while `OUTAGE.armed`, ParSeR's parametric-provision
call (the one koblexmock answers with a list) raises after `OUTAGE.allowed` successful calls, so exactly the
ParSeR run of the first command fails while the other runs finish.
"""

import hashlib
import io
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import modelapi
from inspect_ai.model._providers.mockllm import MockLLM

from koblex_tasks.providers.koblexmock import scripted_output, scripted_reply

METHODS = "standard_prompting,one_time_retrieval,parser"
LIMIT = 4


class Outage:
    armed = False
    allowed = 1


OUTAGE = Outage()


def flaky_output(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
    prompt = messages[-1].text if messages else ""
    if OUTAGE.armed and scripted_reply(prompt).startswith("["):
        if OUTAGE.allowed <= 0:
            raise RuntimeError("scripted outage")
        OUTAGE.allowed -= 1
    return scripted_output(messages, tools, tool_choice, config)


@modelapi(name="flaky")
class Flaky(MockLLM):  # koblexmock's replies (`KoblexMock` itself is @modelapi's wrapper, not a class)
    def __init__(self, *args: Any, **model_args: Any) -> None:
        model_args["custom_outputs"] = flaky_output
        super().__init__(*args, **model_args)


@dataclass
class Invocation:
    code: int
    out: str
    err: str


def koblex_cli(*argv: str) -> Invocation:
    """`koblex ARGV` in this process, with its stdout and stderr."""
    from koblex_tasks.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return Invocation(code, out.getvalue(), err.getvalue())


def fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def grid_argv(shared: Path, log_dir: Path, *extra: str) -> list[str]:
    data = shared / "koblex"
    return [
        "grid",
        "koblex",
        "--model",
        "flaky/gpt-4o",
        "--methods",
        METHODS,
        "-T",
        "reranker=none",
        "-T",
        f"data={data / 'koblex.jsonl'}",
        "-T",
        f"corpus={data / 'statutes.jsonl'}",
        "--limit",
        str(LIMIT),
        "--log-dir",
        str(log_dir),
        "--released",
        str(data / "released_gpt4o"),
        "--display",
        "none",
        "--resamples",
        "2000",
        *extra,
    ]


@dataclass
class ResumedGrid:
    log_dir: Path
    first: Invocation
    second: Invocation
    before: dict[str, tuple[str, int]]  # log name -> (sha256, mtime) after the first command
    after: dict[str, tuple[str, int]]  # after the second
    first_runs: dict[str, tuple[str | None, str]]  # log name -> (method, status) after the first command


def top_logs(log_dir: Path) -> dict[str, tuple[str, int]]:
    return {p.name: fingerprint(p) for p in sorted(log_dir.glob("*.eval"))}


@pytest.fixture(scope="session")
def resumed_grid(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> ResumedGrid:
    log_dir = tmp_path_factory.mktemp("grid")
    OUTAGE.armed, OUTAGE.allowed = True, 1
    try:
        first = koblex_cli(*grid_argv(shared_data, log_dir))
    finally:
        OUTAGE.armed = False
    before = top_logs(log_dir)
    first_runs = methods_of(log_dir, list(before))
    second = koblex_cli(*grid_argv(shared_data, log_dir))
    return ResumedGrid(log_dir, first, second, before, top_logs(log_dir), first_runs)


def methods_of(log_dir: Path, names: list[str]) -> dict[str, tuple[str | None, str]]:
    """log name -> (the method in its metadata, status)."""
    out = {}
    for name in names:
        log = read_eval_log(str(log_dir / name), header_only=True)
        out[name] = ((log.eval.metadata or {}).get("method"), log.status)
    return out
