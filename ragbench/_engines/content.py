"""A local model's identity by content, not by name: a folder whose weights were replaced (a new
checkpoint saved over the old one) must neither be served the old answers from a shared cache nor mix
with them in a resumed run.

Hashing every byte of a model's weights would take minutes for a 16 GB model, so each file adds its
name, its size and `BLOCKS` blocks of `BLOCK` bytes spread evenly over it (the whole file when it is
smaller): 1 MiB read a file. Training or merging an adapter changes bytes all over the tensors it
touches; a change confined to a few kilobytes of one file can go unseen."""
from __future__ import annotations

import hashlib
from pathlib import Path

from .embedded import is_embedded

BLOCK = 4096
BLOCKS = 256


def content_digest(path: str | Path) -> str | None:
    """16 hex digits of sha256 over a local model file or folder (hidden files and folders left out,
    such as `.cache`); None when `path` is neither (a hub name, a server's model)."""
    root = Path(path).expanduser()
    if root.is_file():
        files = [(root.name, root)]
    elif root.is_dir():
        files = sorted((str(f.relative_to(root)), f) for f in root.rglob("*")
                       if f.is_file() and not any(part.startswith(".") for part in f.relative_to(root).parts))
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


def local_model_digest(model: str) -> str | None:
    """`content_digest` of a local model (None for the embedded model, known by its package's version)."""
    return None if is_embedded(model) else content_digest(model)


def file_digest(path: str | Path) -> str | None:
    """16 hex digits of sha256 over every byte of a small file (a rules or replay file); None when it
    cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError:
        return None
