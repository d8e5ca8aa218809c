"""A local model's identity by content, not by name: a folder whose weights were replaced (a new
checkpoint saved over the old one) must neither be served the old answers from a shared cache nor mix
with them in a resumed run.

Hashing every byte of a model's weights would take minutes for a 16 GB model, so files are sampled
(`ragbench._storage.content_digest`): training or merging an adapter changes bytes all over the tensors it
touches."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..._storage.content_digest import BLOCK as BLOCK  # re-exported
from ..._storage.content_digest import content_digest as content_digest  # re-exported
from .embedded import is_embedded


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
