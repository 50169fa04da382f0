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


def _entry(tmp_path: Path) -> Path:
    return tmp_path / "text" / "k1"


@pytest.mark.parametrize("tamper", ["extra file", "dropped from the manifest and corrupted", "subdirectory"])
def test_verification_covers_every_file_of_the_entry(tmp_path: Path, tamper: str) -> None:
    import json

    from koblex_tasks.corpus.cache import verify_entry

    builds: list[str] = []
    _open(tmp_path, builds)
    entry = _entry(tmp_path)
    assert verify_entry(entry, "k1")
    if tamper == "extra file":
        (entry / "planted.npy").write_bytes(b"not vouched for")
    elif tamper == "subdirectory":
        (entry / "nested").mkdir()
    else:
        (entry / "second.txt").write_text("x", encoding="utf-8")
        manifest = json.loads((entry / MANIFEST).read_text(encoding="utf-8"))
        manifest["files"]["second.txt"] = "0" * 64
        (entry / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
        assert not verify_entry(entry, "k1")  # listed with a wrong hash
        del manifest["files"]["second.txt"]
        (entry / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
        (entry / "second.txt").write_text("corrupted", encoding="utf-8")
    assert not verify_entry(entry, "k1")
    assert _open(tmp_path, builds) == ("value", False) and len(builds) == 2
    assert verify_entry(entry, "k1") and _open(tmp_path, builds) == ("value", True)


def test_external_files_are_verified_too(tmp_path: Path) -> None:
    from koblex_tasks.corpus.cache import file_sha256

    source = tmp_path / "source.txt"
    source.write_text("v1", encoding="utf-8")

    def open_with_source() -> tuple[str, bool]:
        return open_cached(
            "text",
            "k1",
            load=lambda entry: (entry / "value.txt").read_text(encoding="utf-8"),
            build=lambda: source.read_text(encoding="utf-8"),
            save=lambda value, directory: (directory / "value.txt").write_text(value, encoding="utf-8"),
            extra=lambda _: {"external": {"source": file_sha256(source)}},
            external={"source": source},
            cache_dir=tmp_path,
        )

    assert open_with_source() == ("v1", False) and open_with_source() == ("v1", True)
    source.write_text("v2", encoding="utf-8")
    assert open_with_source() == ("v2", False)


def test_an_entry_path_that_is_a_file_is_repaired_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    builds: list[str] = []
    entry = _entry(tmp_path)
    entry.parent.mkdir(parents=True)
    entry.write_text("a stray file", encoding="utf-8")
    with caplog.at_level("WARNING"):
        assert _open(tmp_path, builds) == ("value", False)
    assert "is not a directory; replacing it" in caplog.text
    assert entry.is_dir() and (entry / MANIFEST).is_file()
    assert _open(tmp_path, builds) == ("value", True) and builds == ["built"]  # not rebuilt on every run


def test_a_read_only_cache_falls_back_to_memory_with_one_warning(
    tiny_corpus: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import tempfile

    from koblex_tasks.corpus import cache
    from koblex_tasks.corpus.bm25 import BM25Index
    from koblex_tasks.corpus.statutes import load_statutes
    from koblex_tasks.corpus.tokenizers import OfficialTokenizer

    root = tmp_path / "readonly"
    root.mkdir()
    root.chmod(0o555)
    if os.geteuid() == 0:  # root ignores permission bits: make the refused write explicit

        def refuse(*args: object, **kwargs: object) -> str:
            raise PermissionError(13, "Permission denied", str(root))

        monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    monkeypatch.setattr(cache, "_unwritable", set())
    try:
        with caplog.at_level("WARNING"):
            corpus = load_statutes(str(tiny_corpus), cache_dir=root)
            index = BM25Index.open(corpus, OfficialTokenizer(), cache_dir=root)
            again = BM25Index.open(corpus, OfficialTokenizer(), cache_dir=root)
    finally:
        root.chmod(0o755)
    assert not index.loaded_from_cache and index.search("강도가 사람을 상해하거나", 3)
    assert again.search("강도가 사람을 상해하거나", 3) == index.search("강도가 사람을 상해하거나", 3)
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "is not writable" in warnings[0].getMessage()
    assert not list(root.rglob(MANIFEST))  # nothing was published (as root, empty kind folders may exist)


def test_stale_staging_directories_are_removed_live_ones_kept(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys
    import time

    from koblex_tasks.corpus.cache import OWNER, STALE_AFTER_S, remove_stale_staging, staging_dir

    kind = tmp_path / "bm25"
    live = staging_dir(kind / "key")  # ours: this process is alive
    dead = staging_dir(kind / "key")
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    owner = json.loads((dead / OWNER).read_text(encoding="utf-8"))
    owner.update(pid=int(finished.stdout), start=None)
    (dead / OWNER).write_text(json.dumps(owner), encoding="utf-8")
    old_unknown = kind / "key.tmp-old"
    old_unknown.mkdir()
    past = time.time() - STALE_AFTER_S - 60
    os.utime(old_unknown, (past, past))
    fresh_unknown = kind / "key.tmp-fresh"
    fresh_unknown.mkdir()
    recycled = staging_dir(kind / "key")  # our pid, but recorded with another start time: a reused pid
    owner = json.loads((recycled / OWNER).read_text(encoding="utf-8"))
    owner["start"] = "1"
    (recycled / OWNER).write_text(json.dumps(owner), encoding="utf-8")
    removed = remove_stale_staging(kind)
    assert sorted(removed) == sorted([dead, old_unknown, recycled])
    assert live.is_dir() and fresh_unknown.is_dir()
    # and open_cached cleans up its kind's directory before it builds
    text_kind = tmp_path / "text"
    left = staging_dir(text_kind / "k1")
    (left / OWNER).unlink()
    os.utime(left, (past, past))
    _open(tmp_path, [])
    assert not left.exists() and [p.name for p in text_kind.iterdir()] == ["k1"]


def test_a_verification_is_remembered_until_a_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm start does not hash an unchanged entry again; any write to a file (even one that keeps its size
    and puts its modification time back) brings the hashing back, as does a change just before verifying."""
    import json
    import os

    from koblex_tasks.corpus import cache

    _open(tmp_path, [])
    entry = _entry(tmp_path)
    hashed: list[int] = []
    real = cache.files_sha256
    monkeypatch.setattr(cache, "files_sha256", lambda paths: hashed.append(len(paths)) or real(paths))
    monkeypatch.setattr(cache, "RACY_NS", 0)  # the files were written just now
    assert cache.verify_entry(entry, "k1") and cache.verify_entry(entry, "k1")
    assert hashed == [1]  # the second verification trusted the stamp
    assert [p.name for p in (tmp_path / "text").iterdir()] == ["k1"]  # the stamp is not beside the entry
    value = entry / "value.txt"
    stat = value.stat()
    time.sleep(0.01)
    value.write_text("VALUE", encoding="utf-8")
    os.utime(value, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert not cache.verify_entry(entry, "k1") and hashed == [1, 1]
    # a stamp taken less than RACY_NS after a file's last change is not trusted
    _open(tmp_path, [])
    monkeypatch.setattr(cache, "RACY_NS", 10**12)
    before = len(hashed)
    assert cache.verify_entry(entry, "k1") and cache.verify_entry(entry, "k1") and len(hashed) == before + 2
    stamp = next((tmp_path / ".verified" / "text").iterdir())
    assert json.loads(stamp.read_text(encoding="utf-8"))["key"] == "k1"
