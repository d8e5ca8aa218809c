"""Which passage ids more than one shard holds, found after step 1 from each shard's sorted id hashes
(NNN.ids.npy, `worker.id_hash`), as the one-process build refuses a corpus whose ids repeat.

The hashes are compared a range of the hash space at a time (`shared_hashes`): in each range, every shard's
distinct hashes are put together and sorted, and a hash seen twice is held by two shards. The work is a sort of
every hash once, whatever the number of shards (comparing each pair of shards read every shard's hashes once a
shard: shards x passages, hours of the head's time for MS MARCO v2.1 on hundreds of shards), and memory is one
range's hashes (the files are memory-mapped). Only where hashes are shared are the shards' docs stores read, to
name the ids (two ids may hash alike)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ...index.docstore import DocStore
from .state import ShardBuildState
from .worker import id_hash

RANGE_HASHES = 1 << 22  # hashes of all shards compared at a time (32 MB of int64)
HASH_END = 1 << 63  # id_hash gives 63-bit values


def shared_hashes(shards: Sequence[NDArray[np.int64]], range_hashes: int = RANGE_HASHES) -> set[int]:
    """The values that two or more of `shards` hold, each an array sorted ascending of values in [0, 2^63)."""
    total = sum(len(hashes) for hashes in shards)
    ranges = max(1, -(-total // range_hashes))
    bounds = [HASH_END // ranges * k for k in range(1, ranges)]
    cuts = [[0, *np.searchsorted(hashes, bounds).tolist(), len(hashes)] for hashes in shards]
    found: set[int] = set()
    for k in range(ranges):
        parts = [distinct(hashes[cut[k] : cut[k + 1]]) for hashes, cut in zip(shards, cuts)]
        together = np.sort(np.concatenate(parts)) if parts else np.empty(0, np.int64)
        found.update(together[1:][together[1:] == together[:-1]].tolist())
    return found


def distinct(ordered: NDArray[np.int64]) -> NDArray[np.int64]:
    """A sorted array's distinct values."""
    if len(ordered) < 2:
        return np.asarray(ordered)
    return np.asarray(ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))])


def repeated_across(state: ShardBuildState, shards: int) -> Counter[str]:
    """The ids more than one shard holds, each counted once a shard (read from the shards' docs stores: only where
    their hashes are shared)."""
    shared = shared_hashes([state.ids(number) for number in range(shards)])
    if not shared:
        return Counter()
    found: dict[str, set[int]] = {}
    for number in range(shards):
        store = DocStore(state.docs_folder(number))
        try:
            for i in range(len(store)):
                doc_id = store.get(i).id or ""
                if doc_id and id_hash(doc_id) in shared:
                    found.setdefault(doc_id, set()).add(number)
        finally:
            store.close()
    return Counter({doc_id: len(numbers) for doc_id, numbers in found.items() if len(numbers) > 1})
