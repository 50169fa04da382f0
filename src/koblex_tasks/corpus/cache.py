"""Where on-disk indexes live, and how a cached directory is verified before use.

A cache entry is a directory named by a hash of everything that determines its contents. Beside the files it
holds `manifest.json` with that key and the SHA-256 of every file, written last: a half-written, stale or
tampered entry (a changed, missing or extra file) fails verification and is rebuilt instead of silently giving
wrong rankings. Hashing a 250K-paragraph entry takes most of a second, so a verification is remembered outside
the entries (`.verified/<kind>/<key>.verified`: each file's size, mtime, ctime and inode): while they are
unchanged the hashes are not recomputed; any write to a file changes its ctime, which no user tool can set
back. Entries are built in a staging directory beside the entry and renamed into place; staging
directories left behind by a killed builder are removed by the next run. A cache that cannot be written (a
read-only directory) only costs the rebuild: the value built in memory is used, with one warning.
"""

import functools
import hashlib
import json
import logging
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from koblex_tasks.corpus.statutes import StatuteCorpus

logger = logging.getLogger(__name__)

MANIFEST = "manifest.json"
OWNER = ".owner"  # in a staging directory: who is building it (removed before publishing)
STAGING_MARK = ".tmp-"
STALE_AFTER_S = 3600.0  # a staging directory of unknown owner this old is left over from a killed build

T = TypeVar("T")


class SkipCache(Exception):
    """Raised by a `save` callback when its value must not be cached (it stays in memory only)."""


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
    """SHA-256 of a file, read in 1 MiB blocks (hashlib and reads release the GIL: threads hash in parallel)."""
    digest = hashlib.sha256()
    for block in file_blocks(path):
        digest.update(block)
    return digest.hexdigest()


def files_sha256(paths: list[Path]) -> list[str]:
    """SHA-256 of several files, hashed concurrently (a warm start hashes a few hundred MB)."""
    if len(paths) <= 1:
        return [file_sha256(p) for p in paths]
    with ThreadPoolExecutor(max_workers=min(len(paths), os.cpu_count() or 1)) as pool:
        return list(pool.map(file_sha256, paths))


def read_manifest(directory: Path, key: str) -> dict[str, object] | None:
    """The entry's manifest if it names this key, else None (the files are not checked here)."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) and manifest.get("key") == key else None


VERIFIED_DIR, VERIFIED_SUFFIX = ".verified", ".verified"
RACY_NS = (
    2_000_000_000  # a file changed this close to its verification is hashed again (timestamps are coarse)
)


def _stat_signature(paths: list[Path]) -> list[list[int]]:
    return [[s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_ino, s.st_dev] for s in (p.stat() for p in paths)]


def _verified_stamp(directory: Path) -> Path:
    """`<cache root>/.verified/<kind>/<key>.verified`: not in the folders that hold only entries."""
    return directory.parent.parent / VERIFIED_DIR / directory.parent.name / (directory.name + VERIFIED_SUFFIX)


def _was_verified(directory: Path, key: str, paths: list[Path]) -> bool:
    """True if the files are as they were when last verified, and were not changed just before (as git
    treats a "racily clean" index entry: within a timestamp tick, a change may not show in ctime)."""
    try:
        stamp = json.loads(_verified_stamp(directory).read_text(encoding="utf-8"))
        signature = _stat_signature(paths)
        at = int(stamp["at"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    same = stamp == {"key": key, "files": [str(p) for p in paths], "stat": signature, "at": at}
    return same and all(ctime <= at - RACY_NS for _, _, ctime, _, _ in signature)


def _remember_verified(directory: Path, key: str, paths: list[Path]) -> None:
    """Best effort (a read-only cache just verifies by hashing every time)."""
    stamp = _verified_stamp(directory)
    try:
        blob = {
            "key": key,
            "files": [str(p) for p in paths],
            "stat": _stat_signature(paths),
            "at": time.time_ns(),
        }
        stamp.parent.mkdir(parents=True, exist_ok=True)
        temporary = stamp.with_name(f"{stamp.name}.{os.getpid()}.{threading.get_ident()}")
        temporary.write_text(json.dumps(blob), encoding="utf-8")
        os.replace(temporary, stamp)
    except OSError:
        pass


def verify_entry(directory: Path, key: str, external: Mapping[str, Path] | None = None) -> bool:
    """True only if the manifest names this key and lists exactly the entry's files, each with its hash, and
    each `external` file (e.g. the source an entry was made from) has the hash the manifest recorded for it.
    The hashes are checked once per state of the files (see the module docstring)."""
    manifest = read_manifest(directory, key)
    if manifest is None:
        return False
    files, recorded = manifest.get("files"), manifest.get("external", {})
    try:
        present = {p.name for p in directory.iterdir()} - {MANIFEST}
        if not isinstance(files, dict) or not files or set(files) != present:
            return False  # a file missing, or one the manifest does not vouch for
        if not isinstance(recorded, dict) or not set(external or {}) <= set(recorded):
            return False
        names = sorted(files)
        paths = [directory / n for n in names] + [p for _, p in sorted((external or {}).items())]
        expected = [files[n] for n in names] + [recorded[n] for n in sorted(external or {})]
        stamped = [*paths, directory / MANIFEST]
        if _was_verified(directory, key, stamped):
            return True
        if files_sha256(paths) != expected:
            return False
        _remember_verified(directory, key, stamped)
        return True
    except OSError:
        return False


def publish_entry(build_dir: Path, final_dir: Path, key: str, extra: dict[str, object] | None = None) -> None:
    """Write the manifest into `build_dir`, then move it into place (replacing any invalid old entry)."""
    (build_dir / OWNER).unlink(missing_ok=True)
    paths = sorted(p for p in build_dir.iterdir() if p.is_file() and p.name != MANIFEST)
    files = dict(zip((p.name for p in paths), files_sha256(paths), strict=True))
    (build_dir / MANIFEST).write_text(
        json.dumps({"key": key, "files": files, **(extra or {})}, ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
    _remove(final_dir)
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(build_dir, final_dir)
    except OSError:
        # Another process published the same entry first; theirs is as good as ours.
        shutil.rmtree(build_dir, ignore_errors=True)


def _remove(path: Path) -> None:
    """Remove whatever is at `path`: an entry directory, or a file or link where an entry should be."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.exists():
        shutil.rmtree(path, ignore_errors=True)


def _process_start(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, Linux), to tell it from a later one with its pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def _owner() -> dict[str, object]:
    return {"pid": os.getpid(), "host": socket.gethostname(), "start": _process_start(os.getpid())}


def _owner_alive(owner: dict[str, object]) -> bool | None:
    """Whether the process that wrote `owner` still runs; None when that cannot be told (another host)."""
    pid = owner.get("pid")
    if owner.get("host") != socket.gethostname() or not isinstance(pid, int):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by another user
        pass
    start = owner.get("start")
    return start is None or _process_start(pid) == start


def staging_dir(final_dir: Path) -> Path:
    """A fresh directory beside `final_dir` (publishing is a rename on one file system), marked as ours."""
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=final_dir.name + STAGING_MARK, dir=final_dir.parent))
    (staging / OWNER).write_text(json.dumps(_owner()), encoding="utf-8")
    return staging


def remove_stale_staging(kind_dir: Path, now: float | None = None) -> list[Path]:
    """Remove staging directories of builds that died: their process is gone (same host), or their owner is
    unknown and they are older than `STALE_AFTER_S`. A live builder's directory is never touched."""
    removed: list[Path] = []
    try:
        candidates = [p for p in kind_dir.iterdir() if STAGING_MARK in p.name and p.is_dir()]
    except OSError:
        return removed
    now = time.time() if now is None else now
    for path in candidates:
        try:
            owner = json.loads((path / OWNER).read_text(encoding="utf-8"))
            alive = _owner_alive(owner) if isinstance(owner, dict) else None
        except (OSError, ValueError):
            alive = None
        try:
            old = now - path.stat().st_mtime > STALE_AFTER_S
        except OSError:
            continue
        if alive is False or (alive is None and old):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    if removed:
        logger.info("removed %d stale staging directories in %s", len(removed), kind_dir)
    return removed


def corpus_key(corpus: "StatuteCorpus", **parts: object) -> str:
    """The key of an index of `corpus`: the corpus' fingerprint and size plus what else shapes the index."""
    return cache_key({"corpus": corpus.fingerprint, "size": len(corpus), **parts})


_unwritable: set[Path] = set()  # cache roots already warned about
_unwritable_lock = threading.Lock()


def write_entry(
    entry: Path, key: str, save: Callable[[Path], None], extra: dict[str, object] | None, label: str
) -> bool:
    """Save into a staging directory and publish it as `entry`. A cache that cannot be written is warned
    about once per cache root (the caller keeps its value in memory); returns whether the entry was written."""
    staging: Path | None = None
    try:
        staging = staging_dir(entry)
        save(staging)
        publish_entry(staging, entry, key, extra=extra)
        return True
    except SkipCache as exc:
        logger.warning("%s not cached: %s", label, exc)
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        return False
    except OSError as exc:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        root = entry.parent.parent
        with _unwritable_lock:
            first = root not in _unwritable
            _unwritable.add(root)
        if first:
            logger.warning(
                "cache directory %s is not writable (%s); the %s built in memory is used and not cached",
                root,
                exc,
                label,
            )
        return False


def entry_path(kind: str, key: str, cache_dir: Path | None = None) -> Path:
    """Where the entry `kind`/`key` lives (it may not exist)."""
    return (cache_dir or cache_root()) / kind / key


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
    external: Mapping[str, Path] | None = None,
) -> tuple[T, bool]:
    """Load `<cache root>/<kind>/<key>` if it verifies, else build the value and publish it there.

    The one place an index meets its cache, so that every index treats a stale, corrupted, half-written or
    unreadable entry alike: warn and rebuild, never fail and never use it. `load` reads a verified entry
    (raising if it is unusable), `save` writes a built value into a staging directory, `extra` adds fields
    to the manifest, `label` names the index in warnings (default: `kind`), `external` names files outside
    the entry whose hashes (recorded by `extra` under "external") must also match. Returns the value and whether
    it came from the cache; with `use_cache=False` the cache is neither read nor written.
    """
    entry = entry_path(kind, key, cache_dir)
    name = label or kind
    if use_cache:
        remove_stale_staging(entry.parent)
        if entry.is_dir():
            if verify_entry(entry, key, external):
                try:
                    return load(entry), True
                except Exception as exc:  # a verified but unreadable entry: rebuild rather than fail
                    logger.warning("%s cache entry %s could not be loaded (%s); rebuilding", name, entry, exc)
            else:
                logger.warning("%s cache entry %s is stale or corrupted; rebuilding", name, entry)
        elif entry.exists() or entry.is_symlink():
            logger.warning("%s cache entry %s is not a directory; replacing it", name, entry)
    value = build()
    if use_cache:
        write_entry(
            entry,
            key,
            lambda directory: save(value, directory),
            extra(value) if extra is not None else None,
            name,
        )
    return value, False
