"""An object of a store read as a local file is read (`open_ranged`): its bytes fetched in large ranged reads (one
GET a block of `BLOCK` bytes, `locations.read_range`) and its lines split by Python's own buffered reader, so they
are the lines `open(path, "rb")` gives of the same bytes.

fsspec's own file objects split a line by reading a block ahead and copying it for every line (`readline` through
`ReadAheadCache._fetch`): a corpus part of many short lines cost a block's copy a line, hours where the local
file's build took a minute. A reader that knows where its part ends (`until`) reads no block past it: past `until`
it reads `TAIL` bytes at a time, the rest of its last line, so a part's reads stay within its own bytes.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from .locations import read_range, remote_object

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

BLOCK = 8 << 20  # bytes a GET
TAIL = 64 << 10  # bytes a GET past the part's end (the rest of its last line)


class RangedRaw(io.RawIOBase):
    """A raw file of `size` bytes whose reads are `read(start, stop)`, none crossing `until` from before it."""

    def __init__(self, read: Callable[[int, int], bytes], size: int, until: int) -> None:
        super().__init__()
        self._read, self.size, self.until, self.position = read, size, until, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = (0, self.position, self.size)[whence]
        if base + offset < 0:
            raise ValueError(f"negative seek position {base + offset}")
        self.position = base + offset
        return self.position

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        ahead = self.until - self.position if self.position < self.until else TAIL
        stop = min(self.size, self.position + min(len(view), ahead))
        if stop <= self.position:
            return 0
        data = self._read(self.position, stop)
        view[: len(data)] = data
        self.position += len(data)
        return len(data)


def ranged_file(read: Callable[[int, int], bytes], size: int, until: int, block: int = BLOCK) -> io.BufferedReader:
    """A buffered reader of `size` bytes read by `read(start, stop)` in blocks of `block` (`RangedRaw`)."""
    return io.BufferedReader(RangedRaw(read, size, until), buffer_size=block)


def open_ranged(url: str, until: int, block: int = BLOCK) -> io.BufferedReader:
    """The object `url` opened for reading bytes, a GET a block (module docstring); `until`: where the reader's
    part ends (its reads past it are small)."""
    return ranged_file(partial(read_range, url), remote_object(url).size, until, block)
