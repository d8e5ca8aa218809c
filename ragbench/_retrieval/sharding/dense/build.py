"""dense built in shards: each shard's worker encodes its own passages and writes their rows of `embeddings.npy`
straight into its shard's folder; no process holds more than one chunk's vectors, and no merged embeddings.npy is
written. A shard's file is the one-process index's rows start..stop-1, bit for bit.

Bits depend on what a passage is encoded with: sentence-transformers sorts each `encode` call's texts by length
and pads each batch, and a row's last bits move with its batch's shape. The one-process build encodes the corpus in
chunks of `--chunk-size` passages (rows c*size .. (c+1)*size-1), so a shard encodes the same chunks: step 1 only
counts its passages (the docs store is the worker's), the driver adds the counts up into each shard's first row,
and step 2 (`finish`) encodes every chunk its rows fall in, whole, taking the texts of a chunk's rows in another
shard from that shard's docs store (written in step 1, never changed after), and keeps its own rows. A chunk that
straddles two shards is encoded by both: at most two chunks a shard more than the one-process build encodes.
Step 2 writes the digests of embeddings.npy's blocks beside it (`EMBEDDINGS_BLOCKS`): a run serving the shards from
an object store reads shard 0's row 0 (its encoder check) by ranged reads checked against them.

Step 2 takes a GPU where the cluster has GPUs (`encodes_on_gpu`; sentence-transformers then encodes on it), a CPU
else. The encoder is loaded on the driver once (`prepare`: a model that does not load, or a bad option, ends the build in
one line before any worker starts, and its description makes the manifest's options, as `DenseBuilder.finish`
writes them), then dropped; each step 2 loads its own.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...corpus.readers import passage_text
from ...dense.retriever import DenseBuilder
from ...index.docstore import DocStore
from ..build.kind import Stats

EMBEDDINGS_BLOCKS = "embeddings.blocks.json"  # the digests of embeddings.npy's blocks, written beside it


class PassageCount:
    """Step 1 of a dense shard: its passages counted (their texts are encoded in step 2, `kind.DenseKind.finish`)."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.passages = folder, 0

    indexed_text = DenseBuilder.indexed_text  # the one-process build's texts (`ChunkTexts` reads them so too)

    def add(self, texts: list[str]) -> None:
        self.passages += len(texts)

    def analysed(self) -> Stats:
        return {"folder": self.folder.name, "passages": self.passages}


class ChunkTexts:
    """The indexed texts of rows of the whole corpus, read from the docs stores of the shards holding them."""

    def __init__(self, parent: Path, folders: list[str], starts: list[int], title: bool) -> None:
        self.parent, self.folders, self.starts, self.title = parent, folders, starts, title
        self.stores: dict[int, DocStore] = {}

    def texts(self, first: int, stop: int) -> list[str]:
        found = []
        for row in range(first, stop):
            shard = int(np.searchsorted(self.starts, row, side="right")) - 1
            if shard not in self.stores:
                self.stores[shard] = DocStore(self.parent / self.folders[shard])
            found.append(passage_text(self.stores[shard].get(row - self.starts[shard]), self.title))
        return found

    def close(self) -> None:
        for store in self.stores.values():
            store.close()
