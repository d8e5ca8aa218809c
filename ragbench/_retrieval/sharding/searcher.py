"""One shard's search, in the process that serves it (a Ray actor, `actors`; tests call it directly): the part
every kind shares. Each retriever kind's own search (how it loads its shard's files, how it scores a batch) is its
`ShardedKind.search` (a built-in kind's `sharding/KIND/search.py`), a `ShardSearcher`, found through the run's
registry (`kind_lookup.sharded_kind`).

A searcher checks that its shard's files are the ones the split wrote (their sizes and content digests, `layout`),
loads only them and answers a batch with each query's top k among its passages, numbered in the whole corpus, in
the unsharded retriever's order and with its scores (the run prepares each batch once, `fronts`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, TypedDict

import numpy as np

from ..index.damage import IndexDamage
from .layout import Shard, check_written

TopK = list[tuple[np.ndarray, np.ndarray]]  # a query's (scores, passage numbers), best first


class ShardOptions(TypedDict, total=False):
    """A shard search's own options (its front's `shard_options`): dense's chunk_rows, backend and corpus_rows
    (the whole index's passage count, so a shard scores its rows in the blocks the unsharded search does),
    bm25's and flashrag_bm25's mmap, lucene_bm25's k1 and b."""

    chunk_rows: int
    backend: str
    corpus_rows: int
    mmap: bool
    k1: float
    b: float


class ShardSearcher(ABC):
    """Shard `shard` of one kind's index (module docstring); `options` the search's own (`ShardOptions`)."""

    def __init__(self, shard: Shard, options: ShardOptions) -> None:
        self.shard, self.options = shard, options
        self.passages = shard.stop - shard.start
        check_written(shard)
        self.load()

    @abstractmethod
    def load(self) -> None:
        """Read the shard's files (checked: an `IndexDamage` names the damaged one)."""

    @abstractmethod
    def ranked(self, payload: Any, k: int) -> TopK:
        """Each query's top `k` of this shard, passages numbered from the shard's first."""

    def top_k(self, payload: Any, k: int) -> TopK:
        """Each query's top `k` of this shard, passages numbered in the whole corpus."""
        return [(scores, np.asarray(ids, dtype=np.int64) + self.shard.start) for scores, ids in self.ranked(payload, k)]

    def expect(self, file: str, passages: int) -> None:
        if passages != self.passages:
            raise IndexDamage(file, f"holds {passages} passages, not {self.passages}")


def faiss_rows(scores: np.ndarray, labels: np.ndarray) -> TopK:
    """faiss's answer per query, its -1 labels (fewer vectors than k) left out."""
    return [(row_scores[row >= 0], row[row >= 0].astype(np.int64)) for row_scores, row in zip(scores, labels)]


def empty() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
