"""An `.eval` zip checked before anything inflates it: unique member names, known compression, bounded size.

Inspect's reader inflates a member's whole compressed range into memory and never looks at the size the
zip directory declares, so a 3 MB log can hold a member that inflates to gigabytes. Here each member is
inflated as a stream (64 KiB in, at most 1 MiB out at a time) and counted: the log is refused as soon as
one member passes `ReadLimits.member_bytes` or all of them pass `ReadLimits.total_bytes`, before Inspect
reads it. Declared sizes are checked first (refused without inflating anything); a member whose inflated
size or CRC-32 differs from its directory entry, or whose stream does not end inside its compressed range,
is refused as corrupt, so the bytes counted here are exactly the bytes Inspect will read.

One archive, one reading: Python's `zipfile` shifts every offset by any bytes prepended before the archive,
while Inspect's reader takes the directory's offsets as they are, so one file could hold two archives, one
checked here and another read. An archive is refused unless its directory's offsets are absolute (no bytes
before the first local header, the directory where the end record says), its members lie in directory
order without overlapping each other or the directory, and each local header names the member the directory
names, with the same compression.

Duplicate member names are refused: readers resolve a name to its last entry, so a second
``samples/<id>.json`` appended to a log would silently replace the first. (Inspect itself re-logs a
requeued sample under the same name; such a log is rewritten without superseded copies by
``write_eval_log(read_eval_log(path), new_path)``.)
"""

from __future__ import annotations

import io
import math
import os
import struct
import zipfile
import zlib
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
_LOCAL_FULL = struct.Struct(
    "<4sHHHHHIIIHH"
)  # signature, version, flags, method, time, date, crc, sizes, lengths
_ZIP64_END = b"PK\x06\x06"
_DESCRIPTOR_MAX = 24  # a data descriptor after the data (flag bit 3): signature, CRC, two 64-bit sizes


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
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(
            f"{env if given is None else 'the limit'} must be a positive, finite number of MiB, got {text}"
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
    # A name may appear more than once: `inspect eval-retry` appends a member's new copy to the zip. Inspect
    # (zipfile) reads the last copy; `_check_layout` holds the copies back to back in directory order, so the
    # last copy in the directory is also the last one written, and every copy is checked and inflated below.
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


def _directory_start(fh: IO[bytes]) -> tuple[int, int]:
    """(where the end record says the central directory starts, where it actually starts)."""
    end = zipfile._EndRecData(fh)  # type: ignore[attr-defined]  # the stdlib's end-record reader (zip64)
    if not end:
        raise ArchiveRefused("the .eval zip is truncated or corrupt")
    size_cd, offset_cd, location = end[5], end[6], end[9]
    if end[0] == _ZIP64_END:  # zip64: its end record (56 bytes) and locator (20) sit before the end record
        location -= 56 + 20
    return offset_cd, location - size_cd


def _check_layout(fh: IO[bytes], infos: list[zipfile.ZipInfo]) -> None:
    """Absolute offsets, members back to back in directory order (a data descriptor at most between them),
    no overlaps, and local headers agreeing with the directory."""
    stated, actual = _directory_start(fh)
    if stated != actual:
        raise ArchiveRefused(
            f"{actual - stated:,} bytes before the archive (its directory's offsets are not absolute): "
            "readers would disagree on what it holds"
        )
    end, slack = 0, 0  # where the previous member's data ends; the data descriptor that may follow it
    for info in infos:
        gap = info.header_offset - end
        if gap < 0:
            raise ArchiveRefused(f"member {info.filename!r} overlaps the member before it")
        if gap > slack:
            where = "before the first local header" if end == 0 else f"before member {info.filename!r}"
            raise ArchiveRefused(f"{gap:,} bytes of data {where} that no directory entry accounts for")
        fh.seek(info.header_offset)
        raw = fh.read(_LOCAL_FULL.size)
        if len(raw) < _LOCAL_FULL.size or raw[:4] != b"PK\x03\x04":
            raise ArchiveRefused(f"member {info.filename!r} has no local header where the directory points")
        fields = _LOCAL_FULL.unpack(raw)
        flags, method, name_len, extra_len = fields[2], fields[3], fields[9], fields[10]
        name = fh.read(name_len).decode("utf-8" if flags & 0x800 else "cp437", "replace")
        if name != info.orig_filename:
            raise ArchiveRefused(
                f"the local header at {info.header_offset:,} does not name {info.filename!r}"
            )
        if method != info.compress_type:
            raise ArchiveRefused(f"member {info.filename!r}: local and directory compression methods differ")
        end = info.header_offset + _LOCAL_FULL.size + name_len + extra_len + info.compress_size
        slack = _DESCRIPTOR_MAX if flags & 0x08 else 0
    if actual < end or actual - end > slack:
        raise ArchiveRefused("the last member and the central directory overlap or leave unaccounted bytes")


def _check_order(infos: list[zipfile.ZipInfo]) -> None:
    offsets = [i.header_offset for i in infos]
    if offsets != sorted(offsets) or len(set(offsets)) != len(offsets):
        raise ArchiveRefused("the zip directory lists its members out of order or twice at one offset")


def check_archive(fh: IO[bytes], limits: ReadLimits) -> None:
    """Raise `ArchiveRefused` unless the open zip `fh` is laid out plainly and every member inflates within
    `limits` and intact."""
    try:
        infos = zipfile.ZipFile(fh).infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        raise ArchiveRefused("the .eval zip is truncated or corrupt") from None
    _check_directory(infos, limits)
    _check_order(infos)
    _check_layout(fh, infos)
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
