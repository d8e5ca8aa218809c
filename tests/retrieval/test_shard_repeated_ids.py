"""Passage ids repeated across shards are found from the shards' sorted id hashes range by range of the hash space
(`repeated_ids.shared_hashes`), with the work of one sort of every hash, not of every pair of shards: the values two
or more shards hold, whatever the number of shards, ranges and repeats within a shard."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._retrieval.sharding.build.repeated_ids import HASH_END, repeated_across, shared_hashes

hash_values = st.one_of(st.integers(0, 40), st.integers(HASH_END - 40, HASH_END - 1), st.integers(0, HASH_END - 1))


def pairwise(shards: list[np.ndarray]) -> set[int]:
    return {int(h) for i, a in enumerate(shards) for b in shards[i + 1 :] for h in np.intersect1d(a, b)}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(hash_values, max_size=30), max_size=8), st.integers(1, 50))
def test_shared_hashes_are_the_values_two_shards_hold(shards, range_hashes):
    arrays = [np.sort(np.asarray(values, dtype=np.int64)) for values in shards]
    assert shared_hashes(arrays, range_hashes) == pairwise(arrays)


def test_each_shards_hashes_are_read_once_whatever_the_number_of_shards():
    """Comparing each pair read every shard's hashes once a shard (64 shards: 2,079 reads); now once each, and no
    docs store is opened where no hash is shared."""
    rng = np.random.default_rng(0)
    hashes = [np.sort(rng.integers(0, HASH_END, 1000)) for _ in range(64)]
    reads: list[int] = []

    class State:
        def ids(self, number):
            reads.append(number)
            return hashes[number]

        def docs_folder(self, number):
            raise AssertionError("no hash is shared: no docs store is read")

    assert repeated_across(State(), 64) == {}
    assert sorted(reads) == list(range(64))
