"""The retriever kinds that can be sharded, one `ShardedKind` a kind (each made in its folder), found by name; and
the run's front of an index built in shards (`built_shards_front`: its kind's `ShardKind.front`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._storage.locations import is_remote, joined, remote_object
from ..index.staging import MANIFEST_FILE
from ..shard_build.kind import ShardKind
from ..sharded.layout import Shard, shards_folder
from ..sharded.searcher import ShardOptions, ShardSearcher
from . import bm25, dense, faiss_index, flashrag_bm25, lucene_bm25, tevatron_dense
from .kind import ShardedKind

KINDS: tuple[ShardedKind, ...] = (
    dense.KIND,
    bm25.KIND,
    lucene_bm25.KIND,
    flashrag_bm25.KIND,
    faiss_index.KIND,
    tevatron_dense.KIND,
)


def sharded_kind(name: str) -> ShardedKind | None:
    """The kind `name`'s parts, or None: it cannot be sharded."""
    return next((kind for kind in KINDS if kind.name == name), None)


def kind_build(name: str) -> type[ShardKind] | None:
    """The kind `name`'s shard-parallel build, or None: it has none."""
    kind = sharded_kind(name)
    return kind.build if kind else None


def served_kinds() -> list[str]:
    """The kinds a sharded search serves."""
    return [kind.name for kind in KINDS]


def shard_searcher(name: str, shard: Shard, options: ShardOptions) -> ShardSearcher:
    """Shard `shard` of a `name` index, loaded and checked, for its actor to search (`sharded.actors`)."""
    kind = sharded_kind(name)
    if kind is None:
        raise ValueError(f"no shard search for {name} indexes")
    return kind.search(shard, options)


def built_in_shards(index: Any, shards: int) -> bool:
    """Whether `index`/shards-S is an index built in shards (it holds its own manifest), not a split; at an object
    store's URL, whether that manifest is listed there (a store that cannot be read: not, and the split's front
    files, looked for next, name the problem)."""
    if not isinstance(index, (str, Path)):
        return False
    if is_remote(index):
        try:
            remote_object(joined(str(index), f"shards-{shards}", MANIFEST_FILE))
        except ConfigError:
            return False
        return True
    return (shards_folder(Path(index), shards) / MANIFEST_FILE).is_file()


def built_shards_front(name: str, index: Any, shards: int) -> type[Any] | None:
    """The front class of the kind `name`'s index at `index` when it was built in `shards` shards; None for an
    index split from a one-process build."""
    if not built_in_shards(index, shards):
        return None
    build = kind_build(name)
    if build is None:
        raise ConfigError(f"{index}: its shards-{shards} hold shards built for no kind this ragbench serves")
    front: type[Any] = build.front
    return front
