"""Loading a dataset split from the Hugging Face hub, with the revision recorded for provenance.

Offline runs fail within seconds with the exact option of the tool in use (`hint`): with HF_HUB_OFFLINE or
HF_DATASETS_OFFLINE set only the local cache is tried, and an unreachable hub (a ~3 s connect) is reported at
once instead of after a minute of retries.
"""

import os
import socket
from functools import cache
from typing import Any
from urllib.parse import urlparse

from koblex_tasks.errors import SetupError

OFFLINE_FLAGS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
CONNECT_TIMEOUT = 3.0
INSPECT_HINT = "pass a local JSONL file instead (-T data=PATH / -T corpus=PATH)"


class HubUnavailableError(SetupError, RuntimeError):
    """The hub cannot serve a dataset or model: the message says why and which option avoids it."""

    def __init__(self, what: str, why: str, hint: str) -> None:
        super().__init__(f"cannot load {what} from the Hugging Face hub: {why}; {hint}")
        self.what, self.why, self.hint = what, why, hint

    def with_hint(self, hint: str) -> "HubUnavailableError":
        """The same failure, told with another tool's way around it (`koblex replay`: `--data PATH`)."""
        return HubUnavailableError(self.what, self.why, hint)


def offline_flag() -> str | None:
    """The offline environment variable that is set (to a true value), if any."""
    for name in OFFLINE_FLAGS:
        if os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on"):
            return name
    return None


@cache
def _unreachable(host: str, port: int, timeout: float) -> str | None:
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        return f"{host} is unreachable ({exc.strerror or exc})"
    return None


def hub_unavailable(timeout: float = CONNECT_TIMEOUT) -> str | None:
    """Why the hub cannot be asked (an offline flag, or no connection within `timeout`); None when it can."""
    flag = offline_flag()
    if flag:
        return f"{flag} is set"
    endpoint = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    port = endpoint.port or (443 if endpoint.scheme != "http" else 80)
    return _unreachable(endpoint.hostname or "huggingface.co", port, timeout)


def load_hub_rows(repo: str, split: str, revision: str | None) -> tuple[list[dict[str, Any]], str]:
    """Return the rows of `repo`/`split` and a source label naming repo and revision.

    A failure names Inspect's way around the hub (`-T data=PATH`); other tools re-tell it with their own
    (`HubUnavailableError.with_hint`: `koblex replay`'s `--data`, lm-eval's `KOBLEX_DATA`). With an offline flag set the local `datasets` cache is still tried (it answers in about a
    second); an unreachable hub without the flag fails at once. `datasets` is imported here, not at module
    import, so local-file runs never touch the hub.
    """
    what = f"{repo} (split {split!r}, revision {revision or 'main'})"
    reason = hub_unavailable()
    if reason and not offline_flag():
        raise HubUnavailableError(what, reason, INSPECT_HINT)
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - datasets is a core dependency
        raise RuntimeError("loading from the Hugging Face hub needs the 'datasets' package") from exc
    try:
        ds = datasets.load_dataset(repo, split=split, revision=revision)
    except Exception as exc:
        why = f"{reason} and it is not in the local cache" if reason else str(exc).splitlines()[0]
        raise HubUnavailableError(what, why, INSPECT_HINT) from exc
    return [dict(row) for row in ds], f"hf:{repo}@{revision or 'main'}"
