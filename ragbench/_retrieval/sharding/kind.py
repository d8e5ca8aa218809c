"""The classes a retriever kind is sharded by: a kind is one class, its object the one its catalogue entry names
(`shards: "pkg.module:KIND"`, found by `kind_lookup.sharded_kind`): built-in kinds in their folders under
`sharding/`, a plugin's in its own package (`ragbench.api.retrieval`, docs/writing-plugins.md).

Every kind is a `ShardedKind`: `front` and `search` (the run's side of a search over a split index, `fronts.Front`,
and a shard's search in its actor, `searcher.ShardSearcher`), `checked` and `foreign` (an index checked, or
recognised, before it is split). What else it can do it declares by its bases, each with the members it needs:
`Splits` (`split`: a one-process index cut into shards, `ragbench index shard`), `BuildsShards` (the shard-parallel
build, `index build --ray --shards`: `part_builder`, `merge`, `finish`, `options`, served by `shards_front`; the
steps are `build.kind`'s docstring) and `BuildsBlocks` (the blocks of a merged parallel build, `index build --ray`:
`fields`, `settings`, `worker`, `absorb`; `merged_build.analysis`'s docstring). A caller asks `isinstance(kind,
Splits)`; a kind that declares a base without its members is refused when it is made (TypeError, as any ABC).

The object a catalogue entry names holds no build's settings; a build makes its own (`for_build`: the build's
--build-arg options, the run's registry, how passages become texts), which Ray carries to the workers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .build.kind import PartBuilder, Stats, TermOrder, TextSettings

if TYPE_CHECKING:
    import numpy as np

    from ..._registry import Registry
    from ..index.built import IndexedRetriever
    from .build.front import BuiltShardsFront
    from .fronts import Front
    from .merged_build.analysis import BlockWorker, WorkerSettings
    from .searcher import ShardSearcher

Kind = TypeVar("Kind", bound="ShardedKind")


class ShardedKind(ABC):
    """One retriever kind's sharding (module docstring). `front`: its split index's front; `search`: its shard
    search; `checked`: the retriever whose `check_files` checks an index before it is split (None: checked as
    read)."""

    name: str
    front: type[Front]
    search: type[ShardSearcher]
    checked: type[IndexedRetriever] | None = None

    def __init__(
        self, options: Stats | None = None, registry: Registry | None = None, text: TextSettings | None = None
    ) -> None:
        self.build_options, self.registry, self.text = dict(options or {}), registry, text or TextSettings()

    def for_build(self: Kind, options: Stats, registry: Registry | None, text: TextSettings) -> Kind:
        """This kind with a build's settings (module docstring)."""
        return type(self)(options, registry, text)

    def foreign(self, index: Path) -> int | None:
        """The passage count of `index` where it is an index of this kind another tool built (no manifest)."""
        return None


class Splits(ShardedKind):
    """A kind whose one-process index is cut into shards (`ragbench index shard`)."""

    @abstractmethod
    def split(self, index: Path, folders: list[Path], ranges: list[tuple[int, int]]) -> None:
        """Cut the one-process index at `index` into `folders`, shard i holding the passages ranges[i]."""


class BuildsShards(ShardedKind):
    """A kind built in shards on Ray (`build.kind`'s docstring): `shards_front` is the front of the shards it
    builds, `term_order` how the whole corpus's terms are numbered (`build.terms`)."""

    shards_front: type[BuiltShardsFront]
    term_order: TermOrder = "sorted"

    def prepare(self, first_text: str) -> None:
        """Settings taken from the corpus's first indexed text, before any part is analysed."""

    def encodes_on_gpu(self) -> bool:
        """Whether step 2 wants a GPU (a Ray task then takes one where the cluster has GPUs: `runner.task_gpus`)."""
        return False

    def shards_read(self, number: int, shared: Stats) -> list[int]:
        """The other shards whose step-1 folders (siblings of its own) step 2 of shard `number` reads: a build into
        an object store fetches them for it. None by default."""
        return []

    @abstractmethod
    def part_builder(self, folder: Path) -> PartBuilder: ...

    @abstractmethod
    def merge(self, stats: list[Stats]) -> Stats: ...

    @abstractmethod
    def finish(self, folder: Path, shared: Stats, own: Stats) -> None: ...

    @abstractmethod
    def options(self, shared: Stats) -> Stats: ...


class BuildsBlocks(ShardedKind):
    """A kind whose one index is built on Ray from blocks (`merged_build.analysis`'s docstring): `fields`, the
    arrays a worker makes of a block; `gpu`, whether a block's worker takes a GPU where the cluster has them."""

    fields: tuple[str, ...]
    gpu: bool = False

    @abstractmethod
    def settings(self, builder: Any, first: str, registry: Registry) -> WorkerSettings:
        """What a worker needs to analyse a block as `builder` would (picklable values); `first` is the corpus's
        first indexed text (FlashRAG's BM25 picks its language by it)."""

    @abstractmethod
    def worker(self, settings: WorkerSettings) -> BlockWorker:
        """The worker of an actor (made once an actor: a dense one loads its model once)."""

    @abstractmethod
    def absorb(self, builder: Any, arrays: dict[str, np.ndarray]) -> None:
        """Give `builder` the next block's arrays, renumbered into its vocabulary."""

    def key_files(self, options: Stats) -> list[list[Any]]:
        """Files besides the corpus whose change makes an interrupted build's blocks another build's (dense's
        model): each [path, size, modification time]."""
        return []
