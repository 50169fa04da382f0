"""The paper's released run of a (method, model family): from a local folder, or downloaded once and verified.

File names are `<method>_<family>.jsonl`, tried in the order of every spelling the grid declares for the
method and the family. `--released DIR` reads them from DIR (two spellings present at once is an error).
Otherwise each is downloaded once from its pinned commit into the package cache
(`<cache root>/released/<repo>/<commit>/<file>`); the SHA-256 seen at the first download is recorded beside
it (`<file>.sha256`) and every later use is checked against it (trust on first use, as the LEGIT split): a
changed file is an error, never silently another run. Offline, the first failed download stops further
attempts and the report says, in one line, to pass `--released DIR`.
"""

from __future__ import annotations

import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from koblex_tasks.corpus.cache import cache_root, file_sha256
from koblex_tasks.errors import DataError
from koblex_tasks.spec import MethodGrid, MethodSpec, ModelFamily, ReleasedRuns

TIMEOUT_S = 30


class ReleasedUnavailable(Exception):
    """The released runs cannot be reached (offline, or the server failed): one line naming the way out."""


def candidate_names(method: MethodSpec, family: ModelFamily) -> list[str]:
    """Every file name the paper may have used for this method and family, most likely first."""
    return [f"{m}_{f}.jsonl" for m in method.released for f in family.released]


def released_dir(source: ReleasedRuns, name: str) -> Path:
    return cache_root() / "released" / source.repo.replace("/", "__") / source.commit_of(name)


def verify_first_use(path: Path) -> None:
    """Check `path` against the digest recorded at its first download (recording it when there is none)."""
    record = path.with_name(path.name + ".sha256")
    actual = file_sha256(path)
    if not record.is_file():
        record.write_text(actual + "\n", encoding="utf-8")
        return
    recorded = record.read_text(encoding="utf-8").strip()
    if actual != recorded:
        raise DataError(
            str(path), None, f"SHA-256 {actual} differs from the digest recorded at download ({recorded})"
        )


def _fetch(url: str, target: Path) -> bool:
    """Download `url` to `target` (atomically); False when the server has no such file (HTTP 404)."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            payload = response.read()
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return False
        raise
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
    with os.fdopen(fd, "wb") as out:
        out.write(payload)
    os.replace(tmp, target)
    return True


def released_names(grid: MethodGrid | None) -> set[str]:
    """Every file name the paper's released runs of `grid` may have."""
    if grid is None:
        return set()
    return {name for m in grid.methods for f in grid.families for name in candidate_names(m, f)}


@dataclass
class ReleasedFiles:
    """Finds released files for one report: in `local` (a folder) or the cache, downloading when allowed."""

    source: ReleasedRuns
    local: Path | None = None
    download: bool = True
    offline: str | None = None  # why downloading failed (then no further attempt)
    grid: MethodGrid | None = None  # for `named`: which names the paper released
    hint: str | None = None  # the way out when downloading fails (default: the grid command's options)

    def find(self, method: MethodSpec, family: ModelFamily) -> Path | None:
        """The released file, or None when the paper released none under any spelling.

        Raises ReleasedUnavailable when the files cannot be reached and DataError for a file that changed.
        """
        names = candidate_names(method, family)
        if not names:
            return None
        if self.local is not None:
            present = [self.local / n for n in names if (self.local / n).is_file()]
            if len(present) > 1:
                raise DataError(
                    str(self.local), None, f"two spellings of one run: {[p.name for p in present]}"
                )
            return present[0] if present else None
        for name in names:
            path = released_dir(self.source, name) / name
            if path.is_file():
                verify_first_use(path)
                return path
        if not self.download:
            return None
        return self._download(names)

    def named(self, name: str) -> Path | None:
        """A released file by its own name (`parser_gpt4o.jsonl`): the cached copy, else downloaded once at
        its pinned commit; None when no method and family of the grid releases a file of that name."""
        if name not in released_names(self.grid):
            return None
        path = released_dir(self.source, name) / name
        if path.is_file():
            verify_first_use(path)
            return path
        return self._download([name])

    def _download(self, names: list[str]) -> Path | None:
        if self.offline is not None:
            raise ReleasedUnavailable(self.offline)
        for name in names:
            path = released_dir(self.source, name) / name
            url = self.source.url(name)
            try:
                found = _fetch(url, path)
            except (OSError, urllib.error.URLError) as exc:
                way_out = self.hint or (
                    f"pass --released DIR (a folder with {self.source.repo}'s {self.source.folder}/ files) "
                    "or --no-released"
                )
                self.offline = f"cannot download the paper's released runs ({url}: {exc}); {way_out}"
                raise ReleasedUnavailable(self.offline) from exc
            if found:
                verify_first_use(path)
                return path
        return None
