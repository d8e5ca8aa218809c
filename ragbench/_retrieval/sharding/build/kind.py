"""What a retriever kind gives a shard-parallel build (`ShardKind`), one class a kind, in its kind's folder
(a built-in kind's `sharding/KIND/build.py`, a plugin's own) and named by its `ShardedKind` (`sharding.kind`).

A build runs in two steps a shard, each in a worker (a Ray task; tests call them directly, `worker`):
1. `part_builder(folder)`: given the shard's passages' texts chunk by chunk (`add`), as an `IndexBuilder` is;
   `analysed()` leaves in `folder` what step 2 needs and returns the part's statistics: small, JSON values
   (for BM25: lengths' total, N), never postings or vectors; its per-term statistics, `terms` (words in the order
   of the part's own numbers, their document frequencies), go to a file, merged by term in a middle step (`terms`)
   in the kind's order of terms (`term_order`), never on the driver;
2. `finish(folder, shared, own)`: the shard's files, written into `folder` from what step 1 left there and
   `shared`, what `merge` made of every part's statistics on the driver (N, total length) and, for a kind with
   `terms`, the merged buckets' paths ("buckets": read with `terms.merged_terms`) and counts ("terms", "postings").
Step 2 works in `folder` alone, unless `shards_read` names other shards whose step-1 folders (its siblings) it
reads: a build into an object store fetches those for it. The driver calls `prepare(first_text)` before step 1
(FlashRAG picks its language by the corpus's first text), `merge(stats)` between the steps and `options(shared)`
for the manifest's options. `front` is the run's query
side over the shards (`front.BuiltShardsFront`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from ...._types import Document

if TYPE_CHECKING:
    from ...._registry import Registry
    from .front import BuiltShardsFront

Stats = dict[str, Any]  # JSON values: a part's statistics, or what the driver made of them all
TermOrder = Literal["sorted", "first_seen"]  # by word, or in the corpus's order of first sight (`terms`)


@dataclass(frozen=True)
class TextSettings:
    """How passages become indexed texts, as `index.build_index` takes them."""

    title: bool = True
    split: str | None = None
    split_header: str | None = None
    chunk_size: int = 50_000


class PartBuilder(Protocol):
    def indexed_text(self, doc: Document, title: bool, corpus_format: str) -> str: ...  # IndexBuilder's

    def add(self, texts: list[str]) -> None: ...

    def analysed(self) -> Stats: ...


class ShardKind(ABC):
    """One retriever kind's shard build (module docstring); `options` the build's --build-arg options, `text` how
    passages become indexed texts (`TextSettings`: a kind whose rows depend on --chunk-size reads it)."""

    name: ClassVar[str]
    front: ClassVar[type[BuiltShardsFront]]
    term_order: ClassVar[TermOrder] = "sorted"  # how the whole corpus's terms are numbered (`terms`)

    def __init__(
        self, options: dict[str, Any], registry: Registry | None = None, text: TextSettings | None = None
    ) -> None:
        self.build_options, self.registry, self.text = dict(options), registry, text or TextSettings()

    def prepare(self, first_text: str) -> None:  # noqa: B027 (a hook most kinds leave empty)
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
