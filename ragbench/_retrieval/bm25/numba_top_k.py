"""The top k of a score array in the order bm25s's numba backend gives it, ties included (FlashRAG's BM25).

bm25s 0.2.1 (`bm25s/numba/selection.py`, `_numba_sorted_top_k`, which FlashRAG's `BM25Retriever` searches
with) keeps a min-heap of k (value, position) pairs: the first k positions are pushed, then a later value
replaces the root only when strictly greater. The heap is then ordered by numba's `np.argsort` (its quicksort:
an insertion sort under 16 items, median-of-three partitions above, `numba/misc/quicksort.py`) and flipped.
Tied passages (a BM25 query matching fewer than k passages ties the rest at 0) come out in the order these
steps leave them, which no stable sort gives, so both are replayed here step for step.

The heap replay looks only at positions whose value beats the heap's minimum when their block starts (the
minimum never falls), so a search costs numpy passes over the scores plus a Python step per candidate.
"""

from __future__ import annotations

import numpy as np

SMALL_QUICKSORT = 15  # numba/misc/quicksort.py: under this many, an insertion sort
BLOCK = 1 << 16


def _sift_down(values: list[float], indices: list[int], startpos: int, pos: int) -> None:
    new_value, new_index = values[pos], indices[pos]
    while pos > startpos:
        parentpos = (pos - 1) >> 1
        if new_value < values[parentpos]:
            values[pos], indices[pos] = values[parentpos], indices[parentpos]
            pos = parentpos
            continue
        break
    values[pos], indices[pos] = new_value, new_index


def _sift_up(values: list[float], indices: list[int], pos: int, length: int) -> None:
    startpos = pos
    new_value, new_index = values[pos], indices[pos]
    childpos = 2 * pos + 1
    while childpos < length:
        rightpos = childpos + 1
        if rightpos < length and values[rightpos] < values[childpos]:
            childpos = rightpos
        values[pos], indices[pos] = values[childpos], indices[childpos]
        pos = childpos
        childpos = 2 * pos + 1
    values[pos], indices[pos] = new_value, new_index
    _sift_down(values, indices, startpos, pos)


def heap_top_k(
    scores: np.ndarray, k: int, positions: np.ndarray | None = None, replaced: list[int] | None = None
) -> tuple[list[float], list[int]]:
    """The heap `_numba_sorted_top_k` holds after it has seen every score: values and positions, heap order.
    `positions`: the scores' passage numbers where they are not 0, 1, ... (a sharded search replays the heap over
    the shards' candidates, `sharding.merge`); `replaced` collects the places (in `scores`) that entered the heap
    after its first k."""
    k = min(k, len(scores))
    at = positions.tolist() if positions is not None else None
    values: list[float] = []
    indices: list[int] = []
    for i, value in enumerate(scores[:k].tolist()):  # heap_push: append, then sift towards the root
        values.append(value)
        indices.append(i if at is None else at[i])
        _sift_down(values, indices, 0, i)
    if k == 0:
        return values, indices
    for start in range(k, len(scores), BLOCK):
        block = scores[start : start + BLOCK]
        for offset in np.flatnonzero(block > values[0]).tolist():
            value = float(block[offset])
            if value > values[0]:
                place = start + offset
                values[0], indices[0] = value, place if at is None else at[place]
                _sift_up(values, indices, 0, k)
                if replaced is not None:
                    replaced.append(place)
    return values, indices


def pushed(scores: np.ndarray, k: int) -> np.ndarray:
    """The places of `scores` that ever entered the numba heap of k, ascending: its first k and each that replaced
    its minimum (a shard's candidates for `sharding.merge.merge_numba_top_k`)."""
    replaced: list[int] = []
    heap_top_k(scores, k, replaced=replaced)
    return np.concatenate([np.arange(min(k, len(scores)), dtype=np.int64), np.array(replaced, dtype=np.int64)])


def numba_argsort(values: list[float]) -> list[int]:
    """`np.argsort(values)` as numba compiles it (quicksort, `numba/misc/quicksort.py` `run_quicksort1`)."""
    order = list(range(len(values)))
    if len(values) < 2:
        return order
    stack = [(0, len(values) - 1)]
    while stack:
        low, high = stack.pop()
        while high - low >= SMALL_QUICKSORT:
            i = _partition(values, order, low, high)
            if high - i > i - low:  # push the larger part, go on with the smaller
                if high > i:
                    stack.append((i + 1, high))
                high = i - 1
            else:
                if i > low:
                    stack.append((low, i - 1))
                low = i + 1
        _insertion_sort(values, order, low, high)
    return order


def _insertion_sort(values: list[float], order: list[int], low: int, high: int) -> None:
    for i in range(low + 1, high + 1):
        k = order[i]
        v = values[k]
        j = i
        while j > low and v < values[order[j - 1]]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = k


def _partition(values: list[float], order: list[int], low: int, high: int) -> int:
    mid = (low + high) >> 1
    if values[order[mid]] < values[order[low]]:
        order[low], order[mid] = order[mid], order[low]
    if values[order[high]] < values[order[mid]]:
        order[high], order[mid] = order[mid], order[high]
    if values[order[mid]] < values[order[low]]:
        order[low], order[mid] = order[mid], order[low]
    pivot = values[order[mid]]
    order[high], order[mid] = order[mid], order[high]
    i, j = low, high - 1
    while True:
        while i < high and values[order[i]] < pivot:
            i += 1
        while j >= low and pivot < values[order[j]]:
            j -= 1
        if i >= j:
            break
        order[i], order[j] = order[j], order[i]
        i += 1
        j -= 1
    order[i], order[high] = order[high], order[i]
    return i


def numba_top_k(scores: np.ndarray, k: int, positions: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The k best (scores, positions) of `scores`, best first, in bm25s 0.2.1's numba order (module docstring);
    `positions` as `heap_top_k`'s."""
    values, indices = heap_top_k(scores, k, positions)
    order = numba_argsort(values)[::-1]
    return (
        np.array([values[i] for i in order], dtype=scores.dtype),
        np.array([indices[i] for i in order], dtype=np.int64),
    )
