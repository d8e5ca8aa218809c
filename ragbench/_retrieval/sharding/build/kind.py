"""What a retriever kind gives a shard-parallel build: its `ShardedKind`'s build members (`sharding.kind`), a
built-in kind's in its folder (`sharding/KIND/kind.py`), a plugin's in its own package.

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
for the manifest's options. `shards_front` is the run's
query side over the shards (`front.BuiltShardsFront`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ...._types import Document

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
