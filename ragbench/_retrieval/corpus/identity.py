"""A corpus as an index names and checks it: its content's sha256 (the index cache's key, a manifest's record) and
its files' names, sizes and modification times (what a copy still being written changes)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from .readers import corpus_files
from .saved import folder_sha256

CorpusState = tuple[tuple[str, int, int], ...]  # each data file's name, size, modification time (ns)


def corpus_state(corpus: Path) -> CorpusState:
    """Name, size and modification time (ns) of the corpus file, or of each data file of a saved dataset: what
    a copy still being written changes."""
    return tuple((file.name, (stat := file.stat()).st_size, stat.st_mtime_ns) for file in corpus_files(corpus))


def corpus_bytes(state: tuple[tuple[str, int, int | str], ...]) -> int:
    return sum(size for _, size, _ in state)


def corpus_sha256(corpus: Path) -> str:
    """The identity of a corpus's content: the file's sha256, or `folder_sha256` of a folder's data files."""
    return folder_sha256(corpus, corpus_files(corpus)) if corpus.is_dir() else file_sha256(corpus)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
