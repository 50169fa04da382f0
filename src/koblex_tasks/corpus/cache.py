"""Where on-disk indexes live, and how a cached directory is verified before use.

A cache entry is a directory named by a hash of everything that determines its contents. Beside the files it
holds `manifest.json` with that key and the SHA-256 of every file, written last: a half-written, stale or
tampered entry fails verification and is rebuilt instead of silently giving wrong rankings.
"""

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

MANIFEST = "manifest.json"


def cache_root() -> Path:
    """`$KOBLEX_CACHE_DIR`, else `$XDG_CACHE_HOME/koblex_tasks`, else `~/.cache/koblex_tasks`."""
    explicit = os.environ.get("KOBLEX_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "koblex_tasks"


def cache_key(parts: dict[str, object]) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:32]


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
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
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=final_dir.name + ".tmp-", dir=final_dir.parent))
