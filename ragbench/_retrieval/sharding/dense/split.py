"""A dense index split into shards (`sharding.split.split_index`): each shard the rows start..stop-1 of
embeddings.npy."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...dense.retriever import EMBEDDINGS_FILE
from ...index.damage import read_array

BLOCK = 1 << 22  # values copied at a time


def split_dense(index: Path, folders: list[Path], ranges: list[tuple[int, int]]) -> None:
    embeddings = read_array(index, EMBEDDINGS_FILE)
    for folder, (start, stop) in zip(folders, ranges):
        out = np.lib.format.open_memmap(
            folder / EMBEDDINGS_FILE, "w+", embeddings.dtype, (stop - start, *embeddings.shape[1:])
        )
        rows = max(1, BLOCK // max(1, embeddings.shape[1]))
        for first in range(start, stop, rows):
            out[first - start : min(stop, first + rows) - start] = embeddings[first : min(stop, first + rows)]
        out.flush()
        del out
