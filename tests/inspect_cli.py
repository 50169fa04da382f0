"""`inspect eval` as a user types it: a subprocess of this interpreter, output captured."""

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def inspect_eval_cli(
    *args: str, log_dir: Path, timeout: float = 300, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `inspect eval ARGS --log-dir LOG_DIR`; the caller asserts on the exit code and the output."""
    cmd = [sys.executable, "-m", "inspect_ai", "eval", *args, "--log-dir", str(log_dir)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
