"""A local data file's bytes, decompressed when it is a .gz or .bz2 file (and begins as one). A FIFO, device or
folder where the file should be is refused in one line naming it (`given_handle`), never waited on or read."""

from __future__ import annotations

import bz2
from collections.abc import Callable
from pathlib import Path
from typing import IO, cast

from .._storage.given_files import given_handle
from .._storage.gzipped import open_gzip

# opened for the caller's `with`; GzipFile and BZ2File are binary files, though typeshed's IO[bytes] names more methods
OPENERS: dict[str, Callable[[Path], IO[bytes]]] = {
    ".gz": lambda p: cast(IO[bytes], open_gzip(p)),
    ".bz2": lambda p: cast(IO[bytes], bz2.open(p, "rb")),  # noqa: SIM115
}
MAGIC = {".gz": b"\x1f\x8b", ".bz2": b"BZh"}  # how each compressed format begins
DATA_FILE = "the task's data file (JSON Lines, JSON or CSV; plain, .gz or .bz2)"


def compression(path: Path) -> str | None:
    return path.suffix.lower() if path.suffix.lower() in OPENERS else None


def open_binary(path: Path) -> IO[bytes]:
    """The file's bytes, decompressed when it is compressed: a file named .gz or .bz2 that does not begin
    as one (a download already decompressed) is read as it is."""
    suffix = compression(path)
    handle = open_plain(path)
    if suffix is not None:
        with handle:
            if handle.read(len(MAGIC[suffix])) == MAGIC[suffix]:
                return OPENERS[suffix](path)
        return open_plain(path)
    return handle


def open_plain(path: Path) -> IO[bytes]:
    """The file's bytes as they are on disk; what is not a regular file refused (`given_handle`)."""
    return given_handle(path, DATA_FILE)
