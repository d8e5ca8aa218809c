"""What one retriever kind owns for sharding (`ShardedKind`), made in its folder's `__init__.py`, found by name in
`registry.KINDS` (the package docstring says how to add a kind)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..index.built import IndexedRetriever
from ..shard_build.kind import ShardKind
from ..sharded.searcher import ShardSearcher

Splitter = Callable[[Path, list[Path], list[tuple[int, int]]], None]  # (index, shard folders, passage ranges)


@dataclass(frozen=True)
class ShardedKind:
    """One retriever kind's parts: `front` the run's side of a sharded search (`sharded.fronts.Front`), `search`
    a shard's search in its actor; `split` cuts a one-process index into shards (`ragbench index shard`; None:
    its files are served as they are); `checked` the retriever whose `check_files` checks an index before it is
    split (None: checked as read); `foreign` recognises an index of it another tool built (no manifest: its
    passage count, None where `index` is not one); `build` its shard-parallel build (`index build --ray --shards`;
    None: none)."""

    name: str
    front: type[Any]
    search: type[ShardSearcher]
    split: Splitter | None = None
    checked: type[IndexedRetriever] | None = None
    foreign: Callable[[Path], int | None] | None = None
    build: type[ShardKind] | None = None
