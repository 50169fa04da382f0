"""One TCP probe for every address the package checks before the first sample (model servers, rerank engines).

A missing server must be one line in seconds, not a client's retries for minutes: each caller asks this probe
why a connection to its URL fails and words the refusal for its own setting.
"""

import socket
from urllib.parse import SplitResult


def connection_problem(parts: SplitResult, timeout: float) -> str | None:
    """Why a TCP connection to the URL's host and port fails within `timeout` s, or None when it opens."""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"'{parts.netloc}' has no valid port"
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout):
            return None
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except socket.gaierror:
        return f"unknown host '{parts.hostname}'"
    except OSError as exc:
        return (exc.strerror or str(exc)).lower()
