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


def run_cli(*args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 120) -> Refusal:
    """`python -m <args>` (`inspect_ai eval ...` or `koblex_tasks.cli.main ...`) in `cwd`, timed."""
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )
    lines = [line.rstrip() for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    return Refusal(proc.returncode, lines, time.monotonic() - started)


def inspect_eval(*args: str, cwd: Path, env: Mapping[str, str] | None = None) -> Refusal:
    """`inspect eval ARGS` with the logs under `cwd`."""
    return run_cli("inspect_ai", "eval", *args, "--log-dir", str(cwd / "logs"), cwd=cwd, env=env)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
