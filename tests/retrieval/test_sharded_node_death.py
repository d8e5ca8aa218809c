"""A node dies for real in the middle of a run that uses Ray replicas of its model and a sharded index: the run
finishes with every example answered once, and scores as the run on one machine (no Ray, the whole index).

The module starts a small local cluster of its own (a node of it is removed, which the tests' shared cluster
must not lose): a head without CPUs and three nodes of 2 CPUs. Three replicas and two shard actors (on distinct
nodes) fill 5 of the 6 CPUs, so some node holds a shard and a replica; that node is removed while the run searches
its second batch. Its shard actor is started again on the CPU left free and its queries sent again; its replica's
batches go to the live replicas. Then a node is removed where no CPU is left free: its shards are taken on by the
live shard actors."""

from __future__ import annotations

import json
import logging
import threading

import pytest

from conftest import needs
from ragbench._retrieval.sharding.lucene_bm25.front import LuceneFront
from ragbench._retrieval.sharding.retriever import ShardedRetriever
from ragbench._retrieval.sharding.split import split_index
from ragbench.testing import build_index, installed_registry
from support.helpers import run, samples
from support.ray_cluster import QUIET_NODE
from support.retrieval_samples import passages, write_dpr_tsv

pytestmark = needs("bm25s", "ray")  # not imported while the tests are collected

TASK = "nq_open_flashrag"
QUESTIONS = ["Which king built the castle?", "Who was Moses?", "the song of winter", "zzz", "running river",
             "queen of the castle", "a prophet", "winter king", "the river song", "castle walls"]  # fmt: skip


@pytest.fixture(scope="module")
def own_cluster():
    import ray
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()  # the tests' shared cluster (tests/support/ray_cluster.py): a later module asking connects again
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, **QUIET_NODE})
    workers = [cluster.add_node(num_cpus=2, **QUIET_NODE) for _ in range(3)]
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    yield cluster, workers
    ray.shutdown()
    cluster.shutdown()


def actor_nodes(class_name: str) -> list[str]:
    """The nodes of the live actors of `class_name` (GCS's actor table: no dashboard needed)."""
    from ray._private import state

    return [
        actor["Address"]["NodeID"]
        for actor in state.actors().values()
        if actor["ActorClassName"].endswith(class_name) and actor["State"] == "ALIVE"
    ]


def test_a_node_lost_mid_run_costs_nothing_the_run_scores_as_on_one_machine(tmp_path, own_cluster, monkeypatch, caplog):
    cluster, workers = own_cluster
    index = tmp_path / "index"
    build_index(write_dpr_tsv(tmp_path / "psgs.tsv", passages(120)), index, "lucene_bm25", {}, progress=False,
                registry=installed_registry())  # fmt: skip
    split_index(index, 2, registry=installed_registry())
    data = tmp_path / "nq.jsonl"
    data.write_text("".join(json.dumps({"id": str(i), "question": q, "golden_answers": ["castle"]}) + "\n"
                            for i, q in enumerate(QUESTIONS)))  # fmt: skip
    common = {"tasks": [TASK], "data": {TASK: str(data)}, "system": "vanilla", "retriever": "lucene_bm25"}
    alone = run(tmp_path, "alone", model="scripted:echo", retriever_args={"index": str(index)}, **common)

    monkeypatch.setattr(LuceneFront, "max_batch_size", 2)  # five searches: the node dies in the second
    search, calls, lost, lock = ShardedRetriever.search, [], [], threading.Lock()

    def search_then_lose_a_node(self, queries, k):
        with lock:
            calls.append(len(queries))
            if len(calls) == 2:
                shard_nodes, replica_nodes = set(self.pool.nodes), set(actor_nodes("_EngineActor"))
                assert len(shard_nodes) == 2 and len(replica_nodes & shard_nodes) >= 1  # 3 replicas, 4 slots there
                victim = sorted(shard_nodes & replica_nodes)[0]
                cluster.remove_node(next(node for node in workers if node.node_id == victim))
                lost.append(victim)
        return search(self, queries, k)

    monkeypatch.setattr(ShardedRetriever, "search", search_then_lose_a_node)
    with caplog.at_level(logging.WARNING, logger="ragbench._retrieval.sharding.actors"):
        spread = run(tmp_path, "spread", model="scripted:echo", model_args={"replicas": 3, "batch_size": 2},
                     retriever_args={"index": str(index), "shards": 2}, **common)  # fmt: skip
    assert lost and len(calls) >= 3  # the node died mid-run, searches went on after
    assert spread["results"] == alone["results"] and spread["counts"] == alone["counts"]
    answered = [(line["id"], line["prediction"]) for line in samples(tmp_path / "spread", TASK)]
    assert sorted(answered) == sorted((line["id"], line["prediction"]) for line in samples(tmp_path / "alone", TASK))
    assert len({doc_id for doc_id, _ in answered}) == len(QUESTIONS)  # each once: nothing lost, nothing twice
    assert "its Ray actor died" in caplog.text and "starting it again from its files" in caplog.text
    assert "serving again on node" in caplog.text  # what the run said while it waited for the shard


def test_shards_of_a_node_lost_where_no_cpu_is_left_are_taken_on_by_the_live_actors(tmp_path, own_cluster, monkeypatch):
    """Every whole CPU of the cluster holds a shard actor; a node is removed: no CPU is left for new actors, so the
    live actors load its shards too (never a wait for a CPU that will not come), answering as the whole index."""
    from ragbench._retrieval.sharding.placement import PLACEMENT_VARIABLE, node_cpus, whole_cpus
    from ragbench.testing import load_retriever

    cluster, workers = own_cluster
    index = tmp_path / "index"
    build_index(write_dpr_tsv(tmp_path / "psgs.tsv", passages(120)), index, "bm25", {}, progress=False,
                registry=installed_registry())  # fmt: skip
    shards = whole_cpus(node_cpus())  # 6, or 4 after the test above removed a node
    split_index(index, shards, registry=installed_registry())
    whole = load_retriever("bm25", {"index": str(index)}, registry=installed_registry())
    sharded = load_retriever("bm25", {"index": str(index), "shards": shards}, registry=installed_registry())
    try:
        assert len(sharded.pool.groups) == shards
        monkeypatch.setenv(PLACEMENT_VARIABLE, "5")  # a new actor waited for would fail the batch, not pass it
        live = [node for node in workers if node.node_id in set(sharded.pool.nodes)]
        cluster.remove_node(live[0])
        asked = QUESTIONS[:4]
        got = sharded.search(asked, 10)
        assert not any(isinstance(row, Exception) for row in got), got[0]  # (was: not placed again, the batch failed)
        assert [[(d.id, d.score) for d in row] for row in got] == [
            [(d.id, d.score) for d in row] for row in whole.search(asked, 10)
        ]
        assert sum(sharded.pool.restarts) == 2 and live[0].node_id not in sharded.pool.nodes  # its 2 actors' shards
        assert len({id(actor) for actor in sharded.pool.actors}) == shards - 2
    finally:
        sharded.close()
        whole.close()
