"""What one retriever kind owns for sharding (`ShardedKind`), the object its catalogue entry names
(`shards: "pkg.module:KIND"`, found by `kinds.sharded_kind`): built-in kinds in their folders under `sharding/`,
a plugin's in its own package (`ragbench.api.retrieval`, docs/writing-plugins.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..index.built import IndexedRetriever
from .searcher import ShardSearcher

if TYPE_CHECKING:
    from .build.kind import ShardKind
    from .fronts import Front
    from .merged_build.analysis import BlockKind

Splitter = Callable[[Path, list[Path], list[tuple[int, int]]], None]  # (index, shard folders, passage ranges)


@dataclass(frozen=True)
class ShardedKind:
    """One retriever kind's parts: `front` the run's side of a search over a split index (`sharding.fronts.Front`),
    `search` a shard's search in its actor; `split` cuts a one-process index into shards (`ragbench index shard`;
    None: its files are served as they are); `checked` the retriever whose `check_files` checks an index before it
    is split (None: checked as read); `foreign` recognises an index of it another tool built (no manifest: its
    passage count, None where `index` is not one); `build` its shard-parallel build (`index build --ray --shards`:
    a `sharding.build.kind.ShardKind` subclass, whose `front` serves the shards it builds; None: none); `blocks` its
    blocks' analysis in a merged parallel build (`index build --ray`: a `sharding.merged_build.analysis.BlockKind`; None:
    none)."""

    name: str
    front: type[Front]
    search: type[ShardSearcher]
    split: Splitter | None = None
    checked: type[IndexedRetriever] | None = None
    foreign: Callable[[Path], int | None] | None = None
    build: type[ShardKind] | None = None
    blocks: BlockKind | None = None
