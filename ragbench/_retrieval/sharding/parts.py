"""An earlier plugin's kind, made of parts (deprecated): `ShardedKind(name, front, search, split=, checked=,
foreign=, build=, blocks=)`, its shard build a `ShardKind` subclass (whose `front` serves the shards it builds) and its
blocks a `BlockKind`. Such a kind still builds and searches as it did (`PartsKind` serves it as one `ShardedKind`);
a new kind is one `ShardedKind` subclass (`kind`). Subclassing `ShardKind` or `BlockKind`, or making a kind of
parts, warns (a DeprecationWarning)."""

from __future__ import annotations

import copy
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .build.kind import PartBuilder, Stats, TermOrder, TextSettings
from .kind import ShardedKind

if TYPE_CHECKING:
    import numpy as np

    from ..._registry import Registry
    from ..index.built import IndexedRetriever
    from .build.front import BuiltShardsFront
    from .fronts import Front
    from .merged_build.analysis import BlockWorker, WorkerSettings
    from .searcher import ShardSearcher

Splitter = Callable[[Path, list[Path], list[tuple[int, int]]], None]  # (index, shard folders, passage ranges)


def deprecated(what: str, stacklevel: int = 3) -> None:
    """A DeprecationWarning of `what`, named at the plugin's line: `stacklevel` counts this function's frame and the
    caller's (`__init_subclass__` adds ABCMeta's, a third)."""
    warnings.warn(
        f"{what} is deprecated: a sharded kind is one ShardedKind subclass (docs/scale-out.md, Adding a kind)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


class ShardKind(ABC):
    """An earlier plugin's shard build (deprecated: `ShardedKind`'s members); `options` the build's --build-arg
    options, `text` how passages become indexed texts."""

    name: ClassVar[str]
    front: ClassVar[type[BuiltShardsFront]]
    term_order: ClassVar[TermOrder] = "sorted"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        deprecated("ShardKind", stacklevel=4)  # the class statement, past ABCMeta.__new__

    def __init__(self, options: Stats, registry: Registry | None = None, text: TextSettings | None = None) -> None:
        self.build_options, self.registry, self.text = dict(options), registry, text or TextSettings()

    def prepare(self, first_text: str) -> None:  # noqa: B027 (a hook most kinds leave empty)
        """As `ShardedKind.prepare`."""

    def encodes_on_gpu(self) -> bool:
        return False

    def shards_read(self, number: int, shared: Stats) -> list[int]:
        return []

    @abstractmethod
    def part_builder(self, folder: Path) -> PartBuilder: ...

    @abstractmethod
    def merge(self, stats: list[Stats]) -> Stats: ...

    @abstractmethod
    def finish(self, folder: Path, shared: Stats, own: Stats) -> None: ...

    @abstractmethod
    def options(self, shared: Stats) -> Stats: ...


class BlockKind(ABC):
    """An earlier plugin's blocks of a merged parallel build (deprecated: `ShardedKind`'s members)."""

    fields: ClassVar[tuple[str, ...]]
    gpu: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        deprecated("BlockKind", stacklevel=4)  # the class statement, past ABCMeta.__new__

    @abstractmethod
    def settings(self, builder: Any, first: str, registry: Registry) -> WorkerSettings: ...

    @abstractmethod
    def worker(self, settings: WorkerSettings) -> BlockWorker: ...

    @abstractmethod
    def absorb(self, builder: Any, arrays: dict[str, np.ndarray]) -> None: ...

    def key_files(self, options: Stats) -> list[list[Any]]:
        return []


class PartsKind(ShardedKind):
    """A kind made of an earlier plugin's parts (module docstring), each member its part's."""

    def __init__(
        self,
        name: str,
        front: type[Front],
        search: type[ShardSearcher],
        split: Splitter | None = None,
        checked: type[IndexedRetriever] | None = None,
        foreign: Callable[[Path], int | None] | None = None,
        build: type[ShardKind] | None = None,
        blocks: BlockKind | None = None,
    ) -> None:
        deprecated("ShardedKind(name, front, search, ...) of parts")
        super().__init__()
        self.name, self.front, self.search, self.checked = name, front, search, checked
        self.splitter, self.recogniser, self.build, self.blocks = split, foreign, build, blocks
        self.shards_front = build.front if build else None
        self.term_order = build.term_order if build else "sorted"
        self.fields, self.gpu = (blocks.fields, blocks.gpu) if blocks else ((), False)
        self.built: ShardKind | None = None

    def for_build(self, options: Stats, registry: Registry | None, text: TextSettings) -> ShardedKind:
        made = copy.copy(self)
        made.built = self.build(options, registry, text) if self.build else None
        return made

    @property
    def splits(self) -> bool:
        return self.splitter is not None

    def split(self, index: Path, folders: list[Path], ranges: list[tuple[int, int]]) -> None:
        if self.splitter is None:
            super().split(index, folders, ranges)
        else:
            self.splitter(index, folders, ranges)

    def foreign(self, index: Path) -> int | None:
        return self.recogniser(index) if self.recogniser else None

    def shard_build(self) -> ShardKind:
        if self.built is None:
            raise NotImplementedError(f"{self.name} indexes are not built in shards")
        return self.built

    def prepare(self, first_text: str) -> None:
        self.shard_build().prepare(first_text)

    def encodes_on_gpu(self) -> bool:
        return self.shard_build().encodes_on_gpu()

    def shards_read(self, number: int, shared: Stats) -> list[int]:
        return self.shard_build().shards_read(number, shared)

    def part_builder(self, folder: Path) -> PartBuilder:
        return self.shard_build().part_builder(folder)

    def merge(self, stats: list[Stats]) -> Stats:
        return self.shard_build().merge(stats)

    def finish(self, folder: Path, shared: Stats, own: Stats) -> None:
        self.shard_build().finish(folder, shared, own)

    def options(self, shared: Stats) -> Stats:
        return self.shard_build().options(shared)

    def block_part(self) -> BlockKind:
        if self.blocks is None:
            raise NotImplementedError(f"{self.name} indexes are not built on blocks")
        return self.blocks

    def settings(self, builder: Any, first: str, registry: Registry) -> WorkerSettings:
        return self.block_part().settings(builder, first, registry)

    def worker(self, settings: WorkerSettings) -> BlockWorker:
        return self.block_part().worker(settings)

    def absorb(self, builder: Any, arrays: dict[str, np.ndarray]) -> None:
        self.block_part().absorb(builder, arrays)

    def key_files(self, options: Stats) -> list[list[Any]]:
        return self.block_part().key_files(options) if self.blocks else []
