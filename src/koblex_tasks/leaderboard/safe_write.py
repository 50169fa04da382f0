"""Writing files that never follow a symlink someone planted: the site's pages and the store's database.

`write_atomic` creates its temporary file exclusively (``O_CREAT | O_EXCL | O_NOFOLLOW``, a random name from
`tempfile.mkstemp`) in the target directory, opened through a descriptor of that directory, and renames it
over the target, so a predictable temp name cannot be pre-created as a link to a file elsewhere and a reader
never sees a half-written file. A target that is itself a symlink is refused rather than silently replaced.
`refuse_symlink` is the check for paths another library opens (SQLite follows links).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["SymlinkRefused", "refuse_symlink", "write_atomic"]


class SymlinkRefused(OSError):
    """A path that would be written through a symbolic link."""


def refuse_symlink(path: str | Path) -> None:
    """Raise `SymlinkRefused` when `path` is a symlink (dangling or not)."""
    if os.path.islink(path):
        raise SymlinkRefused(f"{path} is a symbolic link: refusing to write through it")


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except FileNotFoundError:
        return False


def write_atomic(
    directory: str | Path, name: str, text: str, encoding: str = "utf-8", mode: int = 0o644
) -> Path:
    """Write `text` to ``directory/name`` atomically; refuses a `name` with a path part or a symlinked target.

    The file gets `mode` (mkstemp's own is 0o600, too strict for a published page).
    """
    if not name or name in (".", "..") or os.sep in name or (os.altsep and os.altsep in name):
        raise ValueError(f"write_atomic writes a plain file name, got {name!r}")
    directory = Path(directory)
    dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        if _is_link(name, dir_fd):
            raise SymlinkRefused(f"{directory / name} is a symbolic link: refusing to replace it")
        # mkstemp opens with O_CREAT | O_EXCL (and O_NOFOLLOW where the platform has it) under a random name
        fd, tmp_path = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
        tmp = os.path.basename(tmp_path)
        try:
            os.fchmod(fd, mode)
            with os.fdopen(fd, "w", encoding=encoding) as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)
    return directory / name
