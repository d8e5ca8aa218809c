"""Gzip files read so that a fault says what it is. Python's gzip lets zlib's own error through (`zlib.error`,
no OSError) for two unlike faults: damaged data (a bit flipped, a wrong block) and zlib running out of memory
as it unpacks (Z_MEM_ERROR: its 32 KB window is allocated on the first read of each member). Read through
`open_gzip`, the first is a `gzip.BadGzipFile` (an OSError, as a file cut short is an EOFError: the readers
report a stream broken at that line) and the second a MemoryError (the run ends in its one out-of-memory line).

The errors are told apart where the bytes are unpacked, a block at a time (`_CheckedUnpacking`), under a buffered
reader of C's: its lines cost what `gzip.open`'s do (a check on each line's read made iteration 4x slower)."""

from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path
from typing import Any

Z_MEM_ERROR = -4  # zlib.h; zlib.error's message begins "Error -4 "
BLOCK = 1 << 16  # bytes unpacked at a time


def unpacking_fault(exc: zlib.error) -> MemoryError | gzip.BadGzipFile:
    """What a zlib error raised while unpacking is: out of memory, or damaged data."""
    if str(exc).startswith(f"Error {Z_MEM_ERROR} "):
        return MemoryError(f"zlib ran out of memory unpacking gzip data ({exc})")
    return gzip.BadGzipFile(f"corrupt gzip data ({exc})")


class _CheckedUnpacking(io.RawIOBase):
    """A gzip file's unpacked bytes as a raw stream whose reads and seeks (a forward seek unpacks up to there) raise
    `unpacking_fault`'s errors, never zlib.error."""

    def __init__(self, unpacked: gzip.GzipFile) -> None:
        self.unpacked = unpacked

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            return self.unpacked.readinto(buffer)
        except zlib.error as exc:
            raise unpacking_fault(exc) from exc

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        try:
            return self.unpacked.seek(offset, whence)
        except zlib.error as exc:
            raise unpacking_fault(exc) from exc

    def tell(self) -> int:
        return self.unpacked.tell()

    def close(self) -> None:
        self.unpacked.close()
        super().close()


def open_gzip(path: str | Path) -> io.BufferedReader:
    """The unpacked bytes of a gzip file, for the caller's `with`."""
    return io.BufferedReader(_CheckedUnpacking(gzip.GzipFile(path, "rb")), BLOCK)
