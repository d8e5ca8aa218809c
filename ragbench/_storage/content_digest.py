"""A file's or folder's identity by content, cheap at any size: each file adds its name, its size and `BLOCKS`
blocks of `BLOCK` bytes spread evenly over it (the whole file when it is smaller), 1 MiB read a file whatever
its size (a model's weights, a 64 GB faiss index). A change confined to a few kilobytes of one large file can
go unseen."""

from __future__ import annotations

import hashlib
from pathlib import Path

BLOCK = 4096
BLOCKS = 256


def content_digest(path: str | Path) -> str | None:
    """16 hex digits of sha256 over a local file or folder (a model, an index) (hidden files and folders left out,
    such as `.cache`); None when `path` is neither (a hub name, a server's model)."""
    root = Path(path).expanduser()
    if root.is_file():
        files = [(root.name, root)]
    elif root.is_dir():
        files = sorted(
            (str(f.relative_to(root)), f)
            for f in root.rglob("*")
            if f.is_file() and not any(part.startswith(".") for part in f.relative_to(root).parts)
        )
    else:
        return None
    digest = hashlib.sha256()
    for name, file in files:
        size = file.stat().st_size
        digest.update(f"{name}\0{size}\0".encode())
        with file.open("rb") as handle:
            if size <= BLOCK * BLOCKS:
                digest.update(handle.read())
                continue
            for number in range(BLOCKS):
                handle.seek(number * (size - BLOCK) // (BLOCKS - 1))
                digest.update(handle.read(BLOCK))
    return digest.hexdigest()[:16]
