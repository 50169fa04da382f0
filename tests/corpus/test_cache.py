"""The shared cache sequence (`open_cached`) and lazy model holder (`LazyModel`), without any real index."""

import threading
import time
from pathlib import Path

import pytest

from koblex_tasks.corpus.cache import MANIFEST, open_cached
from koblex_tasks.corpus.models import LazyModel


def _open(
    tmp_path: Path, builds: list[str], read: str | None = None, use_cache: bool = True
) -> tuple[str, bool]:
    """Open a one-file text entry; `read` replaces what a load returns ("!" makes the load fail)."""

    def load(entry: Path) -> str:
        text = (entry / "value.txt").read_text(encoding="utf-8")
        if read == "!":
            raise ValueError("unreadable")
        return read or text

    def build() -> str:
        builds.append("built")
        return "value"

    return open_cached(
        "text",
        "k1",
        load=load,
        build=build,
        save=lambda value, directory: (directory / "value.txt").write_text(value, encoding="utf-8"),
        extra=lambda value: {"length": len(value)},
        cache_dir=tmp_path,
        use_cache=use_cache,
        label="Text",
    )


def test_open_cached_builds_publishes_then_loads(tmp_path: Path) -> None:
    builds: list[str] = []
    assert _open(tmp_path, builds) == ("value", False)
    entry = tmp_path / "text" / "k1"
    assert sorted(p.name for p in entry.iterdir()) == [MANIFEST, "value.txt"]
    assert '"length": 5' in (entry / MANIFEST).read_text(encoding="utf-8")
    assert [p.name for p in (tmp_path / "text").iterdir()] == ["k1"]  # no staging directory left behind
    assert _open(tmp_path, builds) == ("value", True) and builds == ["built"]


def test_open_cached_rebuilds_bad_entries(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    builds: list[str] = []
    _open(tmp_path, builds)
    (tmp_path / "text" / "k1" / "value.txt").write_text("tampered", encoding="utf-8")
    with caplog.at_level("WARNING"):
        assert _open(tmp_path, builds) == ("value", False)
    assert "Text cache entry" in caplog.text and "stale or corrupted; rebuilding" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):  # verified, but the loader rejects it
        assert _open(tmp_path, builds, read="!") == ("value", False)
    assert "could not be loaded (unreadable); rebuilding" in caplog.text
    assert len(builds) == 3 and _open(tmp_path, builds) == ("value", True)


def test_open_cached_without_cache_neither_reads_nor_writes(tmp_path: Path) -> None:
    builds: list[str] = []
    assert _open(tmp_path, builds, use_cache=False) == ("value", False)
    assert not (tmp_path / "text").exists()
    _open(tmp_path, builds)
    assert _open(tmp_path, builds, read="cached", use_cache=False) == ("value", False) and len(builds) == 3


def test_lazy_model_loads_once_and_serialises_use() -> None:
    loads: list[int] = []

    def load() -> object:
        time.sleep(0.02)
        loads.append(1)
        return object()

    lazy = LazyModel(load)
    active, peak, seen = [0], [0], []

    def use() -> None:
        with lazy.use() as value:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            seen.append(value)
            time.sleep(0.01)
            active[0] -= 1

    threads = [threading.Thread(target=use) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert loads == [1] and peak[0] == 1 and len(seen) == 4 and all(v is seen[0] for v in seen)
    assert lazy.get() is seen[0]
