"""`ragbench index shard`: an index folder split into S shard folders and their shards.json (`layout`).

A shard holds the passages `start..stop-1` and the retriever's files for them alone:
- dense: the rows start..stop-1 of embeddings.npy;
- bm25 and flashrag_bm25: bm25s's score matrix restricted to those passages (their columns' postings, renumbered
  from 0), with the index's whole vocabulary and params (num_docs the shard's). bm25s stores each posting's
  finished BM25 score, computed at build time with the whole corpus's passage count, document frequencies and
  average length, so a shard scores a passage with the global statistics, exactly as the unsharded index does;
- lucene_bm25: its postings, norms and id ranks restricted to those passages, with the whole index's statistics
  (`split_lucene`);
- faiss_index: a flat inner-product faiss index of those vectors (`split_faiss`; approximate indexes refused).
The docs store, corpus and manifest stay where they are (the run's process reads them, `retriever`). An index
FlashRAG built (a bm25s folder, a faiss file: no manifest) is split too; its shards go into `DIR/shards-S`
(`FILE.shards-S` beside a faiss file), and its own files are only read.

The shards are written into a staging folder renamed into place when complete, so a split cut short leaves no
shards.json; the index's own files are only read. `--overwrite` replaces only a split ragbench made (`foreign_entry`:
its shards.json and nothing it does not name); a symbolic link there is replaced, never followed.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from ..._errors import ConfigError
from ..._storage.own_trees import remove_tree
from ..bm25.bm25s_files import DATA, INDICES, INDPTR, NONOCCURRENCE, PARAMS, VOCAB, read_bm25s_index
from ..bm25.retriever import BM25_DIR, BM25Retriever
from ..dense.faiss_index import index_header
from ..dense.retriever import EMBEDDINGS_FILE, DenseRetriever
from ..index.built import IndexedRetriever, manifest_from
from ..index.damage import IndexDamage, read_array, read_json_object
from ..index.staging import MANIFEST_FILE
from ..lucene.retriever import LuceneBM25Retriever
from .layout import LAYOUT_FILE, foreign_entry, layout_record, read_layout, shards_folder
from .merge import shard_ranges
from .split_faiss import split_faiss
from .split_lucene import split_lucene

BLOCK = 1 << 22  # rows or postings copied at a time


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


def split_bm25(index: Path, folders: list[Path], ranges: list[tuple[int, int]]) -> None:
    split_bm25s(index / BM25_DIR, [folder / BM25_DIR for folder in folders], ranges)


def split_flashrag_bm25(index: Path, folders: list[Path], ranges: list[tuple[int, int]]) -> None:
    split_bm25s(index, folders, ranges)  # FlashRAG's bm25s files lie at the top of its folder


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


Splitter = Callable[[Path, list[Path], list[tuple[int, int]]], None]
SPLITTERS: dict[str, Splitter] = {
    "dense": split_dense,
    "bm25": split_bm25,
    "lucene_bm25": split_lucene,
    "flashrag_bm25": split_flashrag_bm25,
    "faiss_index": split_faiss,
}
CHECKED: dict[str, type[IndexedRetriever]] = {
    "dense": DenseRetriever,
    "bm25": BM25Retriever,
    "lucene_bm25": LuceneBM25Retriever,
}  # the ragbench-built kinds, whose files `check_files` checks; the others' are checked as they are read


def index_source(index: Path) -> tuple[str, int]:
    """(the retriever kind, the passage count) of the index at `index`: a ragbench index folder (its manifest), a
    FlashRAG bm25s folder or a faiss index file."""
    rebuild = "build the index again (ragbench index build)"
    if index.is_file():
        return "faiss_index", index_header(index)[1]
    if (index / PARAMS).is_file() and not (index / MANIFEST_FILE).is_file():
        try:
            return "flashrag_bm25", read_bm25s_index(index).passages
        except IndexDamage as exc:
            raise ConfigError(f"index shard: {index}: {exc}; copy or {rebuild}") from None
    try:
        manifest = manifest_from(read_json_object(index, MANIFEST_FILE))
    except IndexDamage as exc:
        raise ConfigError(f"index shard: {index}: {exc}; {rebuild}") from None
    if manifest.retriever in CHECKED:
        try:
            CHECKED[manifest.retriever].check_files(index, manifest)
        except IndexDamage as exc:
            raise ConfigError(f"index shard: {index}: {exc}; {rebuild}") from None
    return manifest.retriever, manifest.doc_count


def split_index(index: Path, shards: int, overwrite: bool = False) -> Path:
    """Split the index at `index` into `shards` shard folders under `index`/shards-S (module docstring); the
    folder written. An existing complete split is kept (replaced with `overwrite`, if ragbench made it)."""
    if not index.exists():
        raise ConfigError(f"index shard: --index {index}: no such folder or file")
    target = shards_folder(index, shards)
    if os.path.lexists(target) and not overwrite:
        try:
            read_layout(target, index)
            return target
        except (IndexDamage, OSError) as exc:
            check_replaceable(target)
            raise ConfigError(f"index shard: {target}: {exc}; split again with --overwrite") from None
    if os.path.lexists(target):
        check_replaceable(target)
    kind, doc_count = index_source(index)
    if kind not in SPLITTERS:
        raise ConfigError(
            f"index shard: {index} holds a {kind} index; only {', '.join(SPLITTERS)} indexes can be sharded"
        )
    if not 1 <= shards <= doc_count:
        raise ConfigError(f"index shard: --shards {shards}: choose 1 to {doc_count} (its passages)")
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))  # a new folder, ours
    try:
        ranges = shard_ranges(doc_count, shards)
        folders = [staging / f"{number:03d}" for number in range(shards)]
        for folder in folders:
            folder.mkdir()
        SPLITTERS[kind](index, folders, ranges)
        record = layout_record(kind, doc_count, index, folders, ranges)
        (staging / LAYOUT_FILE).write_text(record, encoding="utf-8")
        if target.is_symlink():  # --overwrite: the link replaced, what it leads to left as it is
            target.unlink()
        elif target.exists():  # --overwrite: a split ragbench made (checked above)
            check_replaceable(target)
            remove_tree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def check_replaceable(target: Path) -> None:
    """A ConfigError unless `target` is a symbolic link (replaced, not followed) or a split ragbench made."""
    if not target.is_symlink() and (problem := foreign_entry(target)):
        raise ConfigError(
            f"index shard: {problem}; ragbench replaces only a split it made: move it away, then split again"
        )
