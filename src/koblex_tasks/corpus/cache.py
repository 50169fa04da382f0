"""Where on-disk indexes live, and how a cached directory is verified before use.

A cache entry is a directory named by a hash of everything that determines its contents. Beside the files it
holds `manifest.json` with that key and the SHA-256 of every file, written last: a half-written, stale or
tampered entry fails verification and is rebuilt instead of silently giving wrong rankings.
"""

import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from koblex_tasks.corpus.statutes import StatuteCorpus

logger = logging.getLogger(__name__)

MANIFEST = "manifest.json"

T = TypeVar("T")


def cache_root() -> Path:
    """`$KOBLEX_CACHE_DIR`, else `$XDG_CACHE_HOME/koblex_tasks`, else `~/.cache/koblex_tasks`."""
    explicit = os.environ.get("KOBLEX_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "koblex_tasks"


def cache_key(parts: dict[str, object]) -> str:
    """A short hash of `parts` (JSON with sorted keys), so that equal settings name the same entry."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:32]


def file_blocks(path: Path) -> Iterator[bytes]:
    """A file's bytes in 1 MiB blocks, for hashing files of any size in constant memory."""
    with path.open("rb") as handle:
        yield from iter(functools.partial(handle.read, 1 << 20), b"")


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    for block in file_blocks(path):
        digest.update(block)
    return digest.hexdigest()


def verify_entry(directory: Path, key: str) -> bool:
    """True only if the manifest names this key and every listed file is present with the same hash."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("key") != key:
            return False
        files = manifest["files"]
        return bool(files) and all(file_sha256(directory / name) == digest for name, digest in files.items())
    except (OSError, ValueError, KeyError, TypeError):
        return False


def publish_entry(build_dir: Path, final_dir: Path, key: str, extra: dict[str, object] | None = None) -> None:
    """Write the manifest into `build_dir`, then move it into place (replacing any invalid old entry)."""
    files = {
        p.name: file_sha256(p) for p in sorted(build_dir.iterdir()) if p.is_file() and p.name != MANIFEST
    }
    (build_dir / MANIFEST).write_text(
        json.dumps({"key": key, "files": files, **(extra or {})}, ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
    if final_dir.exists():
        shutil.rmtree(final_dir, ignore_errors=True)
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(build_dir, final_dir)
    except OSError:
        # Another process published the same entry first; theirs is as good as ours.
        shutil.rmtree(build_dir, ignore_errors=True)


def staging_dir(final_dir: Path) -> Path:
    """A fresh directory beside `final_dir`, so that publishing it is a rename on the same file system."""
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=final_dir.name + ".tmp-", dir=final_dir.parent))


def corpus_key(corpus: "StatuteCorpus", **parts: object) -> str:
    """The key of an index of `corpus`: the corpus' fingerprint and size plus what else shapes the index."""
    return cache_key({"corpus": corpus.fingerprint, "size": len(corpus), **parts})


def open_cached(
    kind: str,
    key: str,
    *,
    load: Callable[[Path], T],
    build: Callable[[], T],
    save: Callable[[T, Path], None],
    extra: Callable[[T], dict[str, object]] | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    label: str | None = None,
) -> tuple[T, bool]:
    """Load `<cache root>/<kind>/<key>` if it verifies, else build the value and publish it there.

    The one place an index meets its cache, so that every index treats a stale, corrupted, half-written or
    unreadable entry alike: warn and rebuild, never fail and never use it. `load` reads a verified entry
    (raising if it is unusable), `save` writes a built value into a staging directory, `extra` adds fields
    to the manifest, `label` names the index in warnings (default: `kind`). Returns the value and whether
    it came from the cache; with `use_cache=False` the cache is neither read nor written.
    """
    entry = (cache_dir or cache_root()) / kind / key
    name = label or kind
    if use_cache and entry.exists():
        if verify_entry(entry, key):
            try:
                return load(entry), True
            except Exception as exc:  # a verified but unreadable entry: rebuild rather than fail
                logger.warning("%s cache entry %s could not be loaded (%s); rebuilding", name, entry, exc)
        else:
            logger.warning("%s cache entry %s is stale or corrupted; rebuilding", name, entry)
    value = build()
    if use_cache:
        staging = staging_dir(entry)
        save(value, staging)
        publish_entry(staging, entry, key, extra=extra(value) if extra is not None else None)
    return value, False
