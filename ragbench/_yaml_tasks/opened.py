"""A local data file's bytes, decompressed when it is a .gz or .bz2 file (and begins as one)."""

from __future__ import annotations

import bz2
from collections.abc import Callable
from pathlib import Path
from typing import IO, cast

from .._storage.gzipped import open_gzip

# opened for the caller's `with`; GzipFile and BZ2File are binary files, though typeshed's IO[bytes] names more methods
OPENERS: dict[str, Callable[[Path], IO[bytes]]] = {
    ".gz": lambda p: cast(IO[bytes], open_gzip(p)),
    ".bz2": lambda p: cast(IO[bytes], bz2.open(p, "rb")),  # noqa: SIM115
}
MAGIC = {".gz": b"\x1f\x8b", ".bz2": b"BZh"}  # how each compressed format begins


def compression(path: Path) -> str | None:
    return path.suffix.lower() if path.suffix.lower() in OPENERS else None


def open_binary(path: Path) -> IO[bytes]:
    """The file's bytes, decompressed when it is compressed: a file named .gz or .bz2 that does not begin
    as one (a download already decompressed) is read as it is."""
    suffix = compression(path)
    if suffix is not None:
        with open(path, "rb") as handle:
            if handle.read(len(MAGIC[suffix])) == MAGIC[suffix]:
                return OPENERS[suffix](path)
    return open(path, "rb")
