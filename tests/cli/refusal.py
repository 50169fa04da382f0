"""A refused run as a user sees it: the real CLI in a subprocess, its non-blank output lines, exit code, time."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# Inspect's own line once a run has started (before a solver is built), not part of any refusal.
INSPECT_BANNER = "Monitor from another shell: inspect ctl"
# The bound the issue sets is 10 s on an idle machine (a refusal takes 3-7 s there); the test machine is shared.
SECONDS = 20


@dataclass(frozen=True)
class Refusal:
    returncode: int
    lines: list[str]
    seconds: float

    @property
    def line(self) -> str:
        """The one line a refusal is (fails the test when there are more)."""
        assert len(self.lines) == 1, "\n".join(self.lines[-40:])
        return self.lines[0]


def run_cli(
    *args: str, cwd: Path, env: Mapping[str, str | None] | None = None, timeout: float = 120
) -> Refusal:
    """`python -m ARGS` (or `python -c CODE ARGS`) in `cwd`, timed; `env` adds variables (None: unsets one)."""
    started = time.monotonic()
    command = [sys.executable, *args] if args[0] == "-c" else [sys.executable, "-m", *args]
    proc = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None},
    )
    output = (proc.stdout + proc.stderr).splitlines()
    lines = [line.rstrip() for line in output if line.strip() and not line.startswith(INSPECT_BANNER)]
    return Refusal(proc.returncode, lines, time.monotonic() - started)


def koblex_cli(*args: str, cwd: Path) -> Refusal:
    """`koblex ARGS`, through the console script's function."""
    return run_cli("-c", "import sys; from koblex_tasks.cli import main; sys.exit(main())", *args, cwd=cwd)


def inspect_eval(*args: str, cwd: Path, env: Mapping[str, str | None] | None = None) -> Refusal:
    """`inspect eval ARGS` with the logs under `cwd`."""
    return run_cli("inspect_ai", "eval", *args, "--log-dir", str(cwd / "logs"), cwd=cwd, env=env)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
