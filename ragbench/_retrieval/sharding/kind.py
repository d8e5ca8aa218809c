"""The one protocol a retriever kind implements to be sharded (`ShardedKind`): a kind is one class, its object the
one its catalogue entry names (`shards: "pkg.module:KIND"`, found by `kinds.sharded_kind`): built-in kinds in
their folders under `sharding/`, a plugin's in its own package (`ragbench.api.retrieval`, docs/writing-plugins.md).

Its typed members are each part of sharding: `front` and `search` (the run's side of a search over a split index,
`fronts.Front`, and a shard's search in its actor, `searcher.ShardSearcher`), `split` (a one-process index cut into
shards, `ragbench index shard`), `checked` and `foreign` (an index checked, or recognised, before it is split), the
shard-parallel build (`index build --ray --shards`: `part_builder`, `merge`, `finish`, `options`, served by
`shards_front`; the steps are `build.kind`'s docstring) and the blocks of a merged parallel build (`index build
--ray`: `fields`, `settings`, `worker`, `absorb`; `merged_build.analysis`'s docstring). A part a kind lacks is
left as it is here: `splits`, `builds_shards` and `builds_blocks` say which it has.

The object a catalogue entry names holds no build's settings; a build makes its own (`for_build`: the build's
--build-arg options, the run's registry, how passages become texts), which Ray carries to the workers.
"""

from __future__ import annotations

import copy
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .build.kind import PartBuilder, Stats, TermOrder, TextSettings

if TYPE_CHECKING:
    import numpy as np

    from ..._registry import Registry
    from ..index.built import IndexedRetriever
    from .build.front import BuiltShardsFront
    from .fronts import Front
    from .merged_build.analysis import BlockWorker, WorkerSettings
    from .searcher import ShardSearcher


class ShardedKind:
    """One retriever kind's sharding (module docstring). `front`: its split index's front; `search`: its shard
    search; `checked`: the retriever whose `check_files` checks an index before it is split (None: checked as read);
    `shards_front`: the front of the shards it builds (None: no shard-parallel build); `term_order`: how the whole
    corpus's terms are numbered in a shard build (`build.terms`); `fields`: the arrays a worker makes of a block
    (none: no merged build on Ray), `gpu`: whether a block's worker takes a GPU where the cluster has them."""

    name: str
    front: type[Front]
    search: type[ShardSearcher]
    checked: type[IndexedRetriever] | None = None
    shards_front: type[BuiltShardsFront] | None = None
    term_order: TermOrder = "sorted"
    fields: tuple[str, ...] = ()
    gpu: bool = False

    def __new__(cls, *args: Any, **kwargs: Any) -> ShardedKind:
        if cls is ShardedKind:  # ShardedKind(name, front, search, ...) of its parts: an earlier plugin's kind
            return object.__new__(PartsKind)  # then made by PartsKind.__init__ from those parts
        return object.__new__(cls)

    def __init__(
        self, options: Stats | None = None, registry: Registry | None = None, text: TextSettings | None = None
    ) -> None:
        self.build_options, self.registry, self.text = dict(options or {}), registry, text or TextSettings()

    def for_build(self, options: Stats, registry: Registry | None, text: TextSettings) -> ShardedKind:
        """This kind with a build's settings (module docstring)."""
        return type(self)(options, registry, text)

    # its split (`ragbench index shard`)

    @property
    def splits(self) -> bool:
        return type(self).split is not ShardedKind.split

    def split(self, index: Path, folders: list[Path], ranges: list[tuple[int, int]]) -> None:
        """Cut the one-process index at `index` into `folders`, shard i holding the passages ranges[i]."""
        raise NotImplementedError(f"{self.name} indexes are not split")

    def foreign(self, index: Path) -> int | None:
        """The passage count of `index` where it is an index of this kind another tool built (no manifest)."""
        return None

    # its shard-parallel build (`build.kind`'s docstring)

    @property
    def builds_shards(self) -> bool:
        return self.shards_front is not None

    def prepare(self, first_text: str) -> None:
        """Settings taken from the corpus's first indexed text, before any part is analysed."""

    def encodes_on_gpu(self) -> bool:
        """Whether step 2 wants a GPU (a Ray task then takes one where the cluster has GPUs: `runner.task_gpus`)."""
        return False

    def shards_read(self, number: int, shared: Stats) -> list[int]:
        """The other shards whose step-1 folders (siblings of its own) step 2 of shard `number` reads: a build into
        an object store fetches them for it. None by default."""
        return []

    def part_builder(self, folder: Path) -> PartBuilder:
        raise NotImplementedError(f"{self.name} indexes are not built in shards")

    def merge(self, stats: list[Stats]) -> Stats:
        raise NotImplementedError(f"{self.name} indexes are not built in shards")

    def finish(self, folder: Path, shared: Stats, own: Stats) -> None:
        raise NotImplementedError(f"{self.name} indexes are not built in shards")

    def options(self, shared: Stats) -> Stats:
        raise NotImplementedError(f"{self.name} indexes are not built in shards")

    # its blocks in a merged parallel build (`merged_build.analysis`'s docstring)

    @property
    def builds_blocks(self) -> bool:
        return bool(self.fields)

    def settings(self, builder: Any, first: str, registry: Registry) -> WorkerSettings:
        """What a worker needs to analyse a block as `builder` would (picklable values); `first` is the corpus's
        first indexed text (FlashRAG's BM25 picks its language by it)."""
        raise NotImplementedError(f"{self.name} indexes are not built on blocks")

    def worker(self, settings: WorkerSettings) -> BlockWorker:
        """The worker of an actor (made once an actor: a dense one loads its model once)."""
        raise NotImplementedError(f"{self.name} indexes are not built on blocks")

    def absorb(self, builder: Any, arrays: dict[str, np.ndarray]) -> None:
        """Give `builder` the next block's arrays, renumbered into its vocabulary."""
        raise NotImplementedError(f"{self.name} indexes are not built on blocks")

    def key_files(self, options: Stats) -> list[list[Any]]:
        """Files besides the corpus whose change makes an interrupted build's blocks another build's (dense's
        model): each [path, size, modification time]."""
        return []


# An earlier plugin's kind, made of parts (deprecated): `ShardedKind(name, front, search, split=, checked=, foreign=,
# build=, blocks=)`, its shard build a `ShardKind` subclass (whose `front` serves the shards it builds) and its blocks
# a `BlockKind`. Such a kind still builds and searches as it did (`PartsKind` serves it as one `ShardedKind`).
# Subclassing `ShardKind` or `BlockKind`, or making a kind of parts, warns (a DeprecationWarning).

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
