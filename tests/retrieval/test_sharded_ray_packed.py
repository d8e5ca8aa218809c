"""More shards than the cluster has CPUs (a laptop's case): the shards packed onto min(S, CPUs) actors of 1 CPU
answer exactly as the unsharded index, on the tests' shared local Ray cluster (`ray_cluster`: 3 nodes of 1 CPU),
an actor serving two shards started again when killed; an actor no node can take is refused in one line within
$RAGBENCH_RAY_PLACEMENT_TIMEOUT, never waited for without end. (Before: 1 actor a shard, the fourth waited for
ever for a CPU.)"""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import needs
from ragbench._errors import ConfigError
from ragbench._retrieval.sharding.placement import PLACEMENT_VARIABLE, packed, placement_timeout
from ragbench._retrieval.sharding.split import split_index
from ragbench.testing import build_index, installed_registry, load_retriever
from support.ray_cluster import killed
from support.retrieval_samples import passages, write_dpr_tsv

QUERIES = ["king queen castle", "running river", "Moses the prophet", "the a of", "zzz unknown words", "song"]
SHARDS = 5  # on 3 CPUs


@given(st.integers(1, 200), st.integers(0, 64))
def test_shards_are_packed_in_order_onto_as_many_actors_as_cpus_sizes_within_one(shards, slots):
    groups = packed(shards, slots)
    assert len(groups) == max(1, min(shards, slots))
    assert [number for group in groups for number in group] == list(range(shards))
    assert max(map(len, groups)) - min(map(len, groups)) <= 1 and min(map(len, groups)) >= 1


@pytest.mark.parametrize("given_value", ["0", "-3", "soon", "nan"])
def test_a_placement_deadline_that_is_not_seconds_above_zero_is_refused(monkeypatch, given_value):
    monkeypatch.setenv(PLACEMENT_VARIABLE, given_value)
    with pytest.raises(ConfigError, match=f"{PLACEMENT_VARIABLE}={given_value}: a number of seconds above 0"):
        placement_timeout()


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("packed")
    corpus = write_dpr_tsv(folder / "psgs_w100.tsv", passages(150))
    build_index(corpus, folder / "index", "bm25", {}, chunk_size=50, progress=False, registry=installed_registry())
    split_index(folder / "index", SHARDS, registry=installed_registry())
    return folder / "index"


def answers(hits):
    return [[(doc.id, doc.score, doc.text) for doc in row] for row in hits]


@needs("bm25s", "ray")
def test_more_shards_than_cpus_packed_onto_the_cluster_answer_as_the_whole_index(index, ray_cluster, caplog):

    registry = installed_registry()
    whole = load_retriever("bm25", {"index": str(index)}, registry=registry)
    sharded = load_retriever("bm25", {"index": str(index), "shards": SHARDS}, registry=registry)
    try:
        assert sharded.pool.groups == [[0], [1, 2], [3, 4]] and len(set(sharded.pool.nodes)) == 3
        for k in (1, 7, 200):
            assert answers(sharded.search(QUERIES, k)) == answers(whole.search(QUERIES, k))
        killed(sharded.pool.actors[1])  # the actor of shards 1 and 2
        with caplog.at_level(logging.WARNING, logger="ragbench._retrieval.sharding.actors"):
            assert answers(sharded.search(QUERIES, 10)) == answers(whole.search(QUERIES, 10))
        assert sharded.pool.restarts == [0, 1, 1, 0, 0]
        assert "shard 1 (passages 30..59" in caplog.text and "shard 2 (passages 60..89" in caplog.text
        assert "starting it again from its files" in caplog.text
    finally:
        sharded.close()
        whole.close()


@needs("bm25s", "ray")
def test_shard_actors_no_node_can_take_are_refused_in_one_line_naming_the_cluster(index, ray_cluster, monkeypatch):
    from ray.util.placement_group import placement_group, remove_placement_group

    # other work holding every CPU (a replica, another run): reserved as a placement group, no process started
    held = placement_group([{"CPU": 1}] * 3, strategy="SPREAD")
    try:
        assert held.wait(timeout_seconds=600)  # a bound on a failure only: the reservation answers at once
        monkeypatch.setenv(PLACEMENT_VARIABLE, "1")
        with pytest.raises(ConfigError) as refused:
            load_retriever("bm25", {"index": str(index), "shards": SHARDS}, registry=installed_registry())
        line = str(refused.value)
        assert "\n" not in line and line.startswith("shard 0 (passages 0..29")
        assert "not placed on Ray within 1 s: the cluster has 3 node(s) with 3 CPU(s) (0 free now)" in line
        assert f"asked for 3 shard actor(s) of 1 CPU serving {SHARDS} shard(s)" in line
        assert PLACEMENT_VARIABLE in line
    finally:
        remove_placement_group(held)
