"""The exact merge of the shards' top k into the unsharded index's top k (pure: no Ray, no files).

The unsharded retrievers (`dense`, `bm25`) rank in one total order, `ranking.best_k`'s: score descending, then
smaller passage number. A shard holds the passages `start..stop-1` of the corpus and ranks its own in the same
order, so a shard's local order is the global order restricted to it, and the global top k is among the union
of the shards' top k: sorting that union by (score descending, global passage number ascending) and keeping k
gives the unsharded answer, ties included, as long as each shard computes the same score for a passage as the
unsharded index does (`searcher`).
"""

from __future__ import annotations

import numpy as np


def shard_ranges(doc_count: int, shards: int) -> list[tuple[int, int]]:
    """`shards` contiguous passage ranges [start, stop) covering 0..doc_count-1, sizes differing by at most one
    (the first ones the larger), none empty."""
    if not 1 <= shards <= doc_count:
        raise ValueError(f"{shards} shards of {doc_count} passages: choose 1 to {doc_count}")
    size, extra = divmod(doc_count, shards)
    bounds = np.cumsum([0] + [size + (i < extra) for i in range(shards)])
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def merge_top_k(parts: list[tuple[np.ndarray, np.ndarray]], k: int) -> tuple[np.ndarray, np.ndarray]:
    """One query's global top `k` (scores, passage numbers), best first, ties by smaller passage number, from
    each shard's top k (scores, global passage numbers)."""
    scores = np.concatenate([np.asarray(s) for s, _ in parts]) if parts else np.zeros(0, dtype=np.float32)
    ids = np.concatenate([np.asarray(i, dtype=np.int64) for _, i in parts]) if parts else np.zeros(0, dtype=np.int64)
    order = np.lexsort((ids, -scores))[: max(0, k)]
    return scores[order], ids[order]
