"""The run's front of an index built in shards (`driver`): its kind's built shards' front (`ShardKind.front`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..index.staging import MANIFEST_FILE
from ..shard_kinds.registry import kind_build
from ..sharded.layout import shards_folder


def built_in_shards(index: Any, shards: int) -> bool:
    """Whether `index`/shards-S is an index built in shards (it holds its own manifest), not a split."""
    return isinstance(index, (str, Path)) and (shards_folder(Path(index), shards) / MANIFEST_FILE).is_file()


def built_shards_front(name: str, index: Any, shards: int) -> type[Any] | None:
    """The front class of the kind `name`'s index at `index` when it was built in `shards` shards; None for an
    index split from a one-process build."""
    if not built_in_shards(index, shards):
        return None
    build = kind_build(name)
    if build is None:
        raise ConfigError(f"{shards_folder(Path(index), shards)} holds shards built for no kind this ragbench serves")
    front: type[Any] = build.front
    return front
