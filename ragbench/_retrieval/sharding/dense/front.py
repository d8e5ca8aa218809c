"""The dense index's run-side front over its shards, split or built as shards (`build.front`)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib import format as npy

from ...._errors import ConfigError
from ...._storage.block_digests import BlockMismatch, CheckedRanges
from ...._storage.locations import joined
from ...._values.json_values import JsonObject
from ...dense.exact_search import checked_backend
from ...dense.retriever import EMBEDDINGS_FILE, DenseRetriever, QueryOptions, checked_index_encoder
from ...index.built import Manifest
from ...index.damage import IndexDamage, read_array
from ...index.remote_docstore import checked_ranges
from ..build.front import BuiltShardsFront
from ..searcher import ShardOptions
from .build import EMBEDDINGS_BLOCKS

NPY_HEAD = 4096  # bytes read for a .npy file's header (numpy pads a 2-d array's to 128)


class DenseFront(BuiltShardsFront):
    """The dense index's query side: the encoder (the manifest's model, instruction, style and encoder dtype,
    checked against row 0 of the index, `first_row`), the docs store(s); the shards hold the rows. Options as
    `DenseRetriever`'s (`QueryOptions`); a split's files are checked as its (`check_files`)."""

    name = "dense"
    options_from = QueryOptions

    def __init__(self, index: str | None = None, shards: int = 1, *, registry: Any, **options: Any) -> None:
        super().__init__(index, shards)
        query = QueryOptions(**options)
        self.backend, self.chunk_rows = checked_backend(query.backend), int(query.chunk_rows)
        self.encoder = checked_index_encoder(
            self.manifest, self.first_row, lambda: self.stores[0].get(0), f"the index at {self.folder}", query,
            registry,
        )  # fmt: skip

    @classmethod
    def check_files(cls, folder: Path, manifest: Manifest) -> None:
        DenseRetriever.check_files(folder, manifest)

    def payload(self, queries: list[str]) -> Any:
        return self.encoder.encode_queries(queries)

    def shard_options(self) -> ShardOptions:
        return {"chunk_rows": self.chunk_rows, "backend": self.backend, "corpus_rows": self.manifest.doc_count}

    def metadata(self) -> JsonObject:
        encoder = self.encoder
        split = (
            {"model": encoder.name, "query_instruction": encoder.query_instruction, "query_style": encoder.query_style}
            if self.split
            else {}
        )  # as the one index's retriever says them; shards built as shards have said only its dtype
        return {**super().metadata(), **split, "encoder_dtype": encoder.dtype, "backend": self.backend}

    def first_row(self) -> np.ndarray:
        """Row 0 of the index's embeddings (a 1-row array): memory-mapped from the split index's or shard 0's
        folder; shard 0's in an object store read by two ranged reads (the .npy header, then the row), each checked
        by the digests of its blocks the build recorded (`EMBEDDINGS_BLOCKS`), never the whole file (an earlier
        build's, which recorded none: fetched whole and checked by its content digest); damaged or written over: a
        ConfigError."""
        if self.split:
            return self.load(EMBEDDINGS_FILE, lambda: read_array(self.folder, EMBEDDINGS_FILE))[:1]
        shard = self.built.shards[0]
        if not shard.source or EMBEDDINGS_BLOCKS not in {name for name, _, _ in shard.written}:
            return read_array(self.shard_file(0, EMBEDDINGS_FILE).parent, EMBEDDINGS_FILE)[:1]
        url = joined(shard.source, EMBEDDINGS_FILE)
        try:
            return head_row(checked_ranges(shard.source, self.shard_file(0, EMBEDDINGS_BLOCKS), EMBEDDINGS_FILE))
        except BlockMismatch as exc:
            fix = self.built.fix
            raise ConfigError(f"retriever dense: {exc}: it was written over (damaged); {fix}") from None
        except IndexDamage as exc:
            raise ConfigError(f"retriever dense: {exc} (damaged); {self.built.fix}") from None
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
