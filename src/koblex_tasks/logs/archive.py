"""An `.eval` zip checked before anything inflates it: unique member names, known compression, bounded size.

Inspect's reader inflates a member's whole compressed range into memory and never looks at the size the
zip directory declares, so a 3 MB log can hold a member that inflates to gigabytes. Here each member is
inflated as a stream (64 KiB in, at most 1 MiB out at a time) and counted: the log is refused as soon as
one member passes `ReadLimits.member_bytes` or all of them pass `ReadLimits.total_bytes`, before Inspect
reads it. Declared sizes are checked first (refused without inflating anything); a member whose inflated
size or CRC-32 differs from its directory entry, or whose stream does not end inside its compressed range,
is refused as corrupt, so the bytes counted here are exactly the bytes Inspect will read.

Duplicate member names are refused: readers resolve a name to its last entry, so a second
``samples/<id>.json`` appended to a log would silently replace the first. (Inspect itself re-logs a
requeued sample under the same name; such a log is rewritten without superseded copies by
``write_eval_log(read_eval_log(path), new_path)``.)
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

MIB = 1 << 20
ENV_MAX_MEMBER = "KOBLEX_LEADERBOARD_MAX_MEMBER_MIB"
ENV_MAX_TOTAL = "KOBLEX_LEADERBOARD_MAX_TOTAL_MIB"
IN_CHUNK = 64 * 1024
OUT_CHUNK = MIB
ZSTD_MAX_WINDOW = 1 << 27  # zstd's own default limit for streaming frames (128 MiB)
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, (version..sizes), name length, extra length


class ArchiveRefused(ValueError):
    """Why the zip cannot be read safely (one line)."""


def _mib(n: int) -> str:
    return f"{n / MIB:,.1f} MiB"


@dataclass(frozen=True)
class ReadLimits:
    """Caps on what reading one log may inflate (an `.eval` member, all members) or load (a `.json` log).

    Defaults leave room for real logs: a 226-sample KoBLEX replay inflates to 7.9 MB in 249 members, the
    largest (`summaries.json`) 1.1 MB.
    """

    member_bytes: int = 64 * MIB
    total_bytes: int = 512 * MIB

    def __post_init__(self) -> None:
        if self.member_bytes < 1 or self.total_bytes < 1:
            raise ValueError(
                f"read limits must be positive, got {self.member_bytes} and {self.total_bytes} bytes"
            )

    @classmethod
    def from_env(cls, member_mib: float | None = None, total_mib: float | None = None) -> ReadLimits:
        """Given values (MiB), else ``$KOBLEX_LEADERBOARD_MAX_MEMBER_MIB`` / ``..._TOTAL_MIB``, else defaults."""
        default = cls()
        return cls(
            _limit(member_mib, ENV_MAX_MEMBER, default.member_bytes),
            _limit(total_mib, ENV_MAX_TOTAL, default.total_bytes),
        )


def _limit(given: float | None, env: str, default: int) -> int:
    if given is None and not os.environ.get(env):
        return default
    text = os.environ[env] if given is None else given
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"${env}={text!r} is not a number of MiB") from None
    if not value > 0:
        raise ValueError(
            f"{env if given is None else 'the limit'} must be a positive number of MiB, got {text}"
        )
    return int(value * MIB)


def _compressed(fh: IO[bytes], info: zipfile.ZipInfo) -> Iterator[bytes]:
    """The member's compressed bytes, `IN_CHUNK` at a time, exactly as its local header places them."""
    fh.seek(info.header_offset)
    header = fh.read(_LOCAL_HEADER.size)
    if len(header) < _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise ArchiveRefused(f"member {info.filename!r} has no local header where the directory points")
    name_len, extra_len = _LOCAL_HEADER.unpack(header)[1:]
    fh.seek(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
    left = info.compress_size
    while left > 0:
        chunk = fh.read(min(IN_CHUNK, left))
        if not chunk:
            raise ArchiveRefused(f"member {info.filename!r} is truncated")
        left -= len(chunk)
        yield chunk


def _inflate_deflate(chunks: Iterator[bytes], name: str) -> Iterator[bytes]:
    d = zlib.decompressobj(-15)
    for chunk in chunks:
        data = chunk
        while True:
            out = d.decompress(data, OUT_CHUNK)
            if out:
                yield out
            data = d.unconsumed_tail
            if not data and len(out) < OUT_CHUNK:
                break
    if not d.eof:
        raise ArchiveRefused(f"member {name!r}: its deflate stream does not end inside its compressed size")


class _ChunkStream(io.RawIOBase):
    """A file view of a chunk iterator (zstandard's stream reader reads a file)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = memoryview(chunk)
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


def _inflate_zstd(chunks: Iterator[bytes], name: str) -> Iterator[bytes]:
    import zstandard  # Inspect's dependency: it writes zstd-compressed logs

    dctx = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
    try:
        with dctx.stream_reader(io.BufferedReader(_ChunkStream(chunks)), read_across_frames=True) as reader:
            while out := reader.read(OUT_CHUNK):
                yield out
    except zstandard.ZstdError as exc:
        raise ArchiveRefused(f"member {name!r}: corrupt zstd data ({exc})") from None


_INFLATERS: dict[int, Callable[[Iterator[bytes], str], Iterator[bytes]]] = {
    zipfile.ZIP_STORED: lambda chunks, _name: chunks,
    zipfile.ZIP_DEFLATED: _inflate_deflate,
    93: _inflate_zstd,
}


def _check_directory(infos: list[zipfile.ZipInfo], limits: ReadLimits) -> None:
    """Everything the directory alone tells: names, methods, declared sizes (nothing is inflated)."""
    dupes = sorted(name for name, n in Counter(i.filename for i in infos).items() if n > 1)
    if dupes:
        raise ArchiveRefused(
            f"{len(dupes)} zip member name(s) appear more than once (e.g. {dupes[0]!r}): a reader sees only the "
            "last copy. Rewrite the log without superseded copies: write_eval_log(read_eval_log(path), new_path)"
        )
    for info in infos:
        if info.compress_type not in _INFLATERS:
            raise ArchiveRefused(f"member {info.filename!r} uses zip compression method {info.compress_type}")
        if info.file_size > limits.member_bytes:
            raise ArchiveRefused(
                f"member {info.filename!r} declares {_mib(info.file_size)} inflated "
                f"(limit {_mib(limits.member_bytes)} per member)"
            )
    declared = sum(i.file_size for i in infos)
    if declared > limits.total_bytes:
        raise ArchiveRefused(f"the zip declares {_mib(declared)} inflated (limit {_mib(limits.total_bytes)})")


def check_archive(fh: IO[bytes], limits: ReadLimits) -> None:
    """Raise `ArchiveRefused` unless every member of the open zip `fh` inflates within `limits` and intact."""
    try:
        infos = zipfile.ZipFile(fh).infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        raise ArchiveRefused("the .eval zip is truncated or corrupt") from None
    _check_directory(infos, limits)
    total = 0
    for info in infos:
        size, crc = 0, 0
        for out in _INFLATERS[info.compress_type](_compressed(fh, info), info.filename):
            size += len(out)
            total += len(out)
            if size > limits.member_bytes:
                raise ArchiveRefused(
                    f"member {info.filename!r} inflates past {_mib(limits.member_bytes)} (the per-member limit; "
                    f"its directory entry declares {_mib(info.file_size)})"
                )
            if total > limits.total_bytes:
                raise ArchiveRefused(f"the zip inflates past {_mib(limits.total_bytes)} (the total limit)")
            crc = zlib.crc32(out, crc)
        if size != info.file_size or crc != info.CRC:
            raise ArchiveRefused(
                f"member {info.filename!r} inflates to {size:,} bytes (CRC {crc:08x}) but its directory entry "
                f"declares {info.file_size:,} (CRC {info.CRC:08x}): corrupt or tampered"
            )
