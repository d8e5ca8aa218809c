"""A bm25 index split into shards (`sharding.split.split_index`): bm25s's score matrix restricted to each shard's
passages (their columns' postings, renumbered from 0), with the index's whole vocabulary and params (num_docs the
shard's). bm25s stores each posting's finished BM25 score, computed at build time with the whole corpus's passage
count, document frequencies and average length, so a shard scores a passage with the global statistics, exactly as
the unsharded index does. flashrag_bm25's files are bm25s's too (`split_bm25s`)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ...bm25.bm25s_files import DATA, INDICES, INDPTR, NONOCCURRENCE, PARAMS, VOCAB, read_bm25s_index
from ...bm25.retriever import BM25_DIR

BLOCK = 1 << 22  # postings copied at a time


def split_bm25(index: Path, folders: list[Path], ranges: list[tuple[int, int]]) -> None:
    split_bm25s(index / BM25_DIR, [folder / BM25_DIR for folder in folders], ranges)


def split_bm25s(source: Path, outs: list[Path], ranges: list[tuple[int, int]]) -> None:
    """bm25s's files of `source` restricted to each range, into `outs` (module docstring)."""
    files = read_bm25s_index(source, prefix=f"{source.name}/")
    for out, (start, stop) in zip(outs, ranges):
        out.mkdir(exist_ok=True)
        counts = np.zeros(files.terms, dtype=np.int64)
        for first, _, indices in posting_blocks(files.indices, files.data, files.indptr):
            keep = (indices >= start) & (indices < stop)
            counts += np.bincount(column_of(files.indptr, first + np.flatnonzero(keep)), minlength=files.terms)
        indptr = np.zeros(files.terms + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        postings = int(indptr[-1])
        data = np.lib.format.open_memmap(out / DATA, "w+", files.data.dtype, (postings,))
        local = np.lib.format.open_memmap(out / INDICES, "w+", np.int32, (postings,))
        written = 0
        for _, scores, indices in posting_blocks(files.indices, files.data, files.indptr):
            keep = (indices >= start) & (indices < stop)  # column-major order is kept: the shard's is the same
            taken = int(keep.sum())
            data[written : written + taken] = scores[keep]
            local[written : written + taken] = indices[keep] - start
            written += taken
        data.flush()
        local.flush()
        del data, local
        np.save(out / INDPTR, indptr.astype(files.indptr.dtype) if files.indptr.dtype == np.int32 else indptr)
        shutil.copyfile(source / VOCAB, out / VOCAB)
        if (source / NONOCCURRENCE).is_file():
            shutil.copyfile(source / NONOCCURRENCE, out / NONOCCURRENCE)
        params = {**files.params, "num_docs": stop - start}
        (out / PARAMS).write_text(json.dumps(params, indent=4), encoding="utf-8")


def posting_blocks(
    indices: np.ndarray, data: np.ndarray, indptr: np.ndarray
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """(first posting, scores, passage numbers) of the score matrix, BLOCK postings at a time."""
    for first in range(0, len(indices), BLOCK):
        yield first, np.asarray(data[first : first + BLOCK]), np.asarray(indices[first : first + BLOCK], np.int64)


def column_of(indptr: np.ndarray, postings: np.ndarray) -> np.ndarray:
    """The term (column) of each posting number."""
    return np.searchsorted(indptr, postings, side="right") - 1
