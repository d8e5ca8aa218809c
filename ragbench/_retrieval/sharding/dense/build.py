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

import io
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib import format as npy

from ...._errors import ConfigError
from ...._storage.block_digests import BlockMismatch, CheckedRanges
from ...._storage.locations import joined
from ...._types import JsonObject
from ...corpus.readers import passage_text
from ...dense.retriever import (
    EMBEDDINGS_FILE,
    DenseBuilder,
    checked_backend,
    checked_index_encoder,
)
from ...index.damage import IndexDamage, read_array
from ...index.docstore import DocStore
from ...index.remote_docstore import checked_ranges
from ..build.front import BuiltShardsFront
from ..build.kind import Stats
from ..searcher import ShardOptions

NPY_HEAD = 4096  # bytes read for a .npy file's header (numpy pads a 2-d array's to 128)
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


class DenseShardsFront(BuiltShardsFront):
    """dense's query side over shards it was built in: the encoder (the manifest's model, instruction, style and
    encoder dtype, checked against shard 0's row 0), the shards' docs stores; the shards hold the rows. Options
    as `DenseRetriever`'s."""

    name = "dense"

    def __init__(
        self,
        index: str | None = None,
        shards: int = 1,
        model: str | None = None,
        query_instruction: str | None = None,
        backend: str = "numpy",
        chunk_rows: int = 32768,
        batch_size: int = 64,
        device: str | None = None,
        query_style: str | None = None,
        *,
        registry: Any,
    ) -> None:
        super().__init__(index, shards)
        self.backend, self.chunk_rows = checked_backend(backend), int(chunk_rows)
        self.encoder = checked_index_encoder(
            self.manifest, self.first_row, lambda: self.stores[0].get(0), f"the index at {self.folder}",
            (model, query_instruction, batch_size, device, query_style), registry,
        )  # fmt: skip

    def payload(self, queries: list[str]) -> Any:
        return self.encoder.encode_queries(queries)

    def shard_options(self) -> ShardOptions:
        return {"chunk_rows": self.chunk_rows, "backend": self.backend, "corpus_rows": self.manifest.doc_count}

    def metadata(self) -> JsonObject:
        return {**super().metadata(), "encoder_dtype": self.encoder.dtype, "backend": self.backend}

    def first_row(self) -> np.ndarray:
        """Row 0 of shard 0's embeddings (a 1-row array): memory-mapped from its folder; in an object store, read
        by two ranged reads (the .npy header, then the row), each checked by the digests of its blocks the build
        recorded (`EMBEDDINGS_BLOCKS`), never the whole file (an earlier build's, which recorded none: fetched
        whole and checked by its content digest); damaged or written over: a ConfigError."""
        shard = self.checked.shards[0]
        if not shard.source or EMBEDDINGS_BLOCKS not in {name for name, _, _ in shard.written}:
            return read_array(self.shard_file(0, EMBEDDINGS_FILE).parent, EMBEDDINGS_FILE)[:1]
        url = joined(shard.source, EMBEDDINGS_FILE)
        try:
            return head_row(checked_ranges(shard.source, self.shard_file(0, EMBEDDINGS_BLOCKS), EMBEDDINGS_FILE))
        except BlockMismatch as exc:
            fix = self.checked.fix
            raise ConfigError(f"retriever dense: {exc}: it was written over (damaged); {fix}") from None
        except IndexDamage as exc:
            raise ConfigError(f"retriever dense: {exc} (damaged); {self.checked.fix}") from None
        except ValueError as exc:
            raise ConfigError(
                f"retriever dense: {url}: not a readable .npy array of vectors ({exc}) (damaged)"
            ) from None


def head_row(embeddings: CheckedRanges) -> np.ndarray:
    """Row 0 of the .npy array of vectors `embeddings` reads (a 1-row array); a ValueError where it is not one."""
    stream = io.BytesIO(embeddings.read(0, NPY_HEAD))
    version = npy.read_magic(stream)
    read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
    shape, fortran, dtype = read_header(stream)
    if len(shape) != 2 or fortran or not shape[0]:
        raise ValueError(f"holds an array of shape {shape}, not rows of vectors")
    start = stream.tell()
    row = embeddings.read(start, start + shape[1] * dtype.itemsize)
    return np.frombuffer(row, dtype=dtype).reshape(1, shape[1])
