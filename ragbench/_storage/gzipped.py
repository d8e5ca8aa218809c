"""Gzip files read so that a fault says what it is. Python's gzip lets zlib's own error through (`zlib.error`,
no OSError) for two unlike faults: damaged data (a bit flipped, a wrong block) and zlib running out of memory
as it unpacks (Z_MEM_ERROR: its 32 KB window is allocated on the first read of each member). Read through
`open_gzip`, the first is a `gzip.BadGzipFile` (an OSError, as a file cut short is an EOFError: the readers
report a stream broken at that line) and the second a MemoryError (the run ends in its one out-of-memory line).
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

Z_MEM_ERROR = -4  # zlib.h; zlib.error's message begins "Error -4 "


def unpacking_fault(exc: zlib.error) -> MemoryError | gzip.BadGzipFile:
    """What a zlib error raised while unpacking is: out of memory, or damaged data."""
    if str(exc).startswith(f"Error {Z_MEM_ERROR} "):
        return MemoryError(f"zlib ran out of memory unpacking gzip data ({exc})")
    return gzip.BadGzipFile(f"corrupt gzip data ({exc})")


@contextmanager
def _told_apart() -> Iterator[None]:
    try:
        yield
    except zlib.error as exc:
        raise unpacking_fault(exc) from exc


class CheckedGzipFile(gzip.GzipFile):
    """A GzipFile whose reads raise `unpacking_fault`'s errors, never zlib.error. Its reading methods are the
    ones that unpack; the others (`readinto`, iteration, `readlines`) call them."""

    def read(self, size: int | None = -1) -> bytes:
        with _told_apart():
            return super().read(size)

    def read1(self, size: int = -1) -> bytes:
        with _told_apart():
            return super().read1(size)

    def peek(self, n: int) -> bytes:
        with _told_apart():
            return super().peek(n)

    def readline(self, size: int | None = -1) -> bytes:
        with _told_apart():
            return super().readline(size)

    def seek(self, offset: int, whence: int = 0) -> int:  # forward seeks unpack up to there
        with _told_apart():
            return super().seek(offset, whence)


def open_gzip(path: str | Path) -> CheckedGzipFile:
    """The unpacked bytes of a gzip file, for the caller's `with`."""
    return CheckedGzipFile(path, "rb")
