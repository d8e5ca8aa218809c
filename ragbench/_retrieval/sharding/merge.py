"""The exact merge of the shards' top k into the unsharded index's top k (pure: no Ray, no files).

The unsharded retrievers (`dense`, `bm25`) rank in one total order, `ranking.best_k`'s: score descending, then
smaller passage number. A shard holds the passages `start..stop-1` of the corpus and ranks its own in the same
order, so a shard's local order is the global order restricted to it, and the global top k is among the union
of the shards' top k: sorting that union by (score descending, global passage number ascending) and keeping k
gives the unsharded answer, ties included, as long as each shard computes the same score for a passage as the
unsharded index does (`searcher`). lucene_bm25 breaks ties by the passages' ids (their rank in the order of
ids); flashrag_bm25's ties follow bm25s's numba heap, replayed over the shards' candidates (`merge_numba_top_k`).
"""

from __future__ import annotations

import numpy as np

from ..bm25.numba_top_k import numba_top_k


def shard_ranges(doc_count: int, shards: int) -> list[tuple[int, int]]:
    """`shards` contiguous passage ranges [start, stop) covering 0..doc_count-1, sizes differing by at most one
    (the first ones the larger), none empty."""
    if not 1 <= shards <= doc_count:
        raise ValueError(f"{shards} shards of {doc_count} passages: choose 1 to {doc_count}")
    size, extra = divmod(doc_count, shards)
    bounds = np.cumsum([0] + [size + (i < extra) for i in range(shards)])
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def merge_top_k(
    parts: list[tuple[np.ndarray, np.ndarray]], k: int, tie_ranks: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """One query's global top `k` (scores, passage numbers), best first, ties by smaller passage number (by smaller
    `tie_ranks[passage]` where given: lucene_bm25's order of ids), from each shard's top k (scores, global passage
    numbers) ranked in the same order."""
    scores = np.concatenate([np.asarray(s) for s, _ in parts]) if parts else np.zeros(0, dtype=np.float32)
    ids = np.concatenate([np.asarray(i, dtype=np.int64) for _, i in parts]) if parts else np.zeros(0, dtype=np.int64)
    ties = ids if tie_ranks is None else np.asarray(tie_ranks)[ids]
    order = np.lexsort((ties, -scores))[: max(0, k)]
    return scores[order], ids[order]


def merge_numba_top_k(parts: list[tuple[np.ndarray, np.ndarray]], k: int) -> tuple[np.ndarray, np.ndarray]:
    """One query's top `k` in bm25s's numba order (flashrag_bm25, `numba_top_k`) from each shard's pushed
    candidates (`numba_top_k.pushed`: scores, global passage numbers). The numba heap over the whole corpus changes
    only at passages whose score beats its minimum, the k-th best score of the passages before them; that is at
    least the k-th best of the shard's own passages before them, so every such passage is one its shard pushed, as
    are the corpus's first k. The heap replayed over the shards' candidates in passage order makes the same
    changes in the same order (the others beat its minimum no more than over the whole corpus): the same heap, so
    the same top k in the same order, zero-score padding included."""
    scores = np.concatenate([np.asarray(s) for s, _ in parts]) if parts else np.zeros(0, dtype=np.float32)
    ids = np.concatenate([np.asarray(i, dtype=np.int64) for _, i in parts]) if parts else np.zeros(0, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    return numba_top_k(scores[order], k, positions=ids[order])
