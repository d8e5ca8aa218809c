"""`ragbench index shard`: an index folder split into S shard folders and their shards.json (`layout`).

A shard holds the passages `start..stop-1` and the retriever's files for them alone, cut by its kind's
`split` (its `Splits.split`; the built-in kinds' `sharding/KIND/split.py`: dense's rows, bm25's and flashrag_bm25's bm25s score matrix, lucene_bm25's
postings with the whole index's statistics, faiss_index's flat index; approximate faiss indexes refused).
The docs store, corpus and manifest stay where they are (the run's process reads them, `retriever`); shards.json
records the block digests of those its kind's front reads, so a run that fetches them from an object store checks
every byte of them (`layout.FRONT_FIELD`). An index
FlashRAG built (a bm25s folder, a faiss file: no manifest) is split too; its shards go into `DIR/shards-S`
(`FILE.shards-S` beside a faiss file), and its own files are only read.

The shards are written into a staging folder renamed into place when complete, so a split cut short leaves no
shards.json; the index's own files are only read. `--overwrite` replaces only a split ragbench made (`foreign_entry`:
its shards.json and nothing it does not name); a symbolic link there is replaced, never followed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..._errors import ConfigError
from ..._storage.block_digests import block_record
from ..._storage.own_trees import remove_tree
from ..index.built import manifest_from
from ..index.damage import IndexDamage, read_json_object
from ..index.staging import MANIFEST_FILE
from .kind import Splits
from .kind_lookup import sharded_kind, sharded_kinds
from .layout import LAYOUT_FILE, foreign_entry, layout_record, read_layout, shards_folder
from .merge import shard_ranges

if TYPE_CHECKING:
    from ..._registry import Registry


def index_source(index: Path, registry: Registry) -> tuple[str, int]:
    """(the retriever kind, the passage count) of the index at `index`: a ragbench index folder (its manifest), or one
    another tool built that its kind recognises (`ShardedKind.foreign`: FlashRAG's bm25s folder, its faiss file)."""
    rebuild = "build the index again (ragbench index build)"
    for known in sharded_kinds(registry):
        try:
            passages = known.foreign(index)
        except IndexDamage as exc:
            raise ConfigError(f"index shard: {index}: {exc}; copy or {rebuild}") from None
        if passages is not None:
            return known.name, passages
    try:
        manifest = manifest_from(read_json_object(index, MANIFEST_FILE))
    except IndexDamage as exc:
        raise ConfigError(f"index shard: {index}: {exc}; {rebuild}") from None
    kind = sharded_kind(registry, manifest.retriever)
    if kind is not None and kind.checked is not None:
        try:
            kind.checked.check_files(index, manifest)
        except IndexDamage as exc:
            raise ConfigError(f"index shard: {index}: {exc}; {rebuild}") from None
    return manifest.retriever, manifest.doc_count


def split_index(index: Path, shards: int, overwrite: bool = False, *, registry: Registry) -> Path:
    """Split the index at `index` into `shards` shard folders under `index`/shards-S (module docstring); the
    folder written; the index's kind is found in `registry`. An existing complete split is kept (replaced with `overwrite`, if ragbench made it)."""
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
    kind, doc_count = index_source(index, registry)
    parts = sharded_kind(registry, kind)
    if not isinstance(parts, Splits):
        splittable = ", ".join(known.name for known in sharded_kinds(registry) if isinstance(known, Splits))
        raise ConfigError(f"index shard: {index} holds a {kind} index; only {splittable} indexes can be sharded")
    if not 1 <= shards <= doc_count:
        raise ConfigError(f"index shard: --shards {shards}: choose 1 to {doc_count} (its passages)")
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))  # a new folder, ours
    try:
        ranges = shard_ranges(doc_count, shards)
        folders = [staging / f"{number:03d}" for number in range(shards)]
        for folder in folders:
            folder.mkdir()
        parts.split(index, folders, ranges)
        front = [name for name in getattr(parts.front, "front_files", ()) if (index / name).is_file()]
        blocks = block_record(index, front) if front else None  # what a run fetching them from a store checks
        record = layout_record(kind, doc_count, index, folders, ranges, front=blocks)
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
