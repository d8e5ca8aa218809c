"""The retriever kinds an index can be built in shards for (each kind's ShardKind class, in its own module), and
the run's front of an index built so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._storage.locations import is_remote, joined, remote_object
from ..index.staging import MANIFEST_FILE
from ..sharded.layout import shards_folder
from .bm25 import Bm25Shards
from .dense import DenseShards
from .flashrag import FlashRagShards
from .kind import ShardKind
from .lucene import LuceneShards

KINDS: tuple[type[ShardKind], ...] = (LuceneShards, Bm25Shards, FlashRagShards, DenseShards)


def shard_kind(name: str) -> type[ShardKind] | None:
    """The ShardKind of retriever kind `name`, or None: no shard-parallel build for it."""
    return next((kind for kind in KINDS if kind.name == name), None)


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
    kind = shard_kind(name)
    if kind is None:
        raise ConfigError(f"{index}: its shards-{shards} hold shards built for no kind this ragbench serves")
    front: type[Any] = kind.front
    return front
