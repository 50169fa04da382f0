"""Headless Chromium for the page tests: DOM dumps, screenshots and layout measurements (skips without it)."""

from __future__ import annotations

import html
import json
import re
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
MEASURED = re.compile(r'<pre id="measure">(.*?)</pre>', re.S)


def chromium(url: str, tmp: Path, *extra: str) -> str:
    """Run Chromium headless on `url` with `extra` flags; its stdout (the DOM with --dump-dom)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: install Debian's `chromium` package to run the browser tests")
    cmd = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        f"--user-data-dir={tmp / 'chromium-profile'}",
        "--virtual-time-budget=2000",
        *extra,
        url,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def with_script(page: Path, script: Path, out: Path) -> Path:
    """A copy of `page` that also runs `script` after the page's own (the shipped page has no test code)."""
    text = page.read_text(encoding="utf-8")
    body_end = text.rindex("</body>")
    code = script.read_text(encoding="utf-8")
    out.write_text(text[:body_end] + f"<script>{code}</script>" + text[body_end:], encoding="utf-8")
    return out


def framed(page: Path, out: Path, width: int, height: int) -> Path:
    """A page showing `page` in an iframe of exactly width x height CSS px, top left.

    Headless Chromium will not make its window narrower than 500 px (`--window-size=390,844` lays the page
    out at 500 px and crops the screenshot), so a phone's viewport is an iframe: inside it `innerWidth` is
    `width` and the page's media queries apply. A message from the framed page (the measurements) is written
    into a pre element with id "measure" for --dump-dom.
    """
    out.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0;overflow:hidden}'
        "iframe{display:block;border:0}</style></head><body>"
        f'<iframe src="{page.as_uri()}" width="{width}" height="{height}"></iframe><pre id="measure"></pre>'
        "<script>addEventListener('message', function (e) {"
        " document.getElementById('measure').textContent = String(e.data); });</script></body></html>",
        encoding="utf-8",
    )
    return out


def screenshot(page: Path, tmp: Path, shot: Path, width: int, height: int) -> Path:
    """A width x height PNG of `page` laid out at that viewport (through `framed`)."""
    wrapper = framed(page, tmp / f"frame-{width}.html", width, height)
    chromium(wrapper.as_uri(), tmp, f"--screenshot={shot}", f"--window-size={width},{height}")
    return shot


def measure(page: Path, script: Path, tmp: Path, width: int, height: int, query: str = "") -> dict[str, Any]:
    """What `script` reported (JSON posted to the parent) with the page in a width x height viewport."""
    wrapped = with_script(page, script, tmp / f"measure-{width}.html")
    wrapper = framed(wrapped, tmp / f"frame-{width}.html", width, height)
    text = wrapper.read_text(encoding="utf-8").replace(wrapped.as_uri(), wrapped.as_uri() + query)
    wrapper.write_text(text, encoding="utf-8")
    dom = chromium(wrapper.as_uri(), tmp, "--dump-dom", f"--window-size={max(width, 500)},{height}")
    found = MEASURED.search(dom)
    assert found and found.group(1), "the measurement script did not report"
    return json.loads(html.unescape(found.group(1)))


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height
