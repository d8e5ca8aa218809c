"""A sharded index served by Ray actors on a local 3-node cluster (the tests' shared `ray_cluster`): one actor a
shard on distinct nodes, answering exactly as the unsharded index; a killed shard actor is started again from its
files and its queries sent again, the answer unchanged."""

from __future__ import annotations

import logging

import pytest

from conftest import needs
from ragbench._retrieval.sharding.split import split_index
from ragbench.testing import build_index, installed_registry, load_retriever
from support.ray_cluster import killed
from support.retrieval_samples import passages, write_dpr_tsv

pytestmark = needs("bm25s", "ray")  # not imported while the tests are collected

QUERIES = ["king queen castle", "running river", "Moses the prophet", "the a of", "zzz unknown words", "song"]
SHARDS = 3


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sharded")
    corpus = write_dpr_tsv(folder / "psgs_w100.tsv", passages(301))
    build_index(corpus, folder / "index", "bm25", {}, chunk_size=50, progress=False, registry=installed_registry())
    split_index(folder / "index", SHARDS, registry=installed_registry())
    return folder / "index"


@pytest.fixture(scope="module")
def searchers(index, ray_cluster):
    registry = installed_registry()
    whole = load_retriever("bm25", {"index": str(index)}, registry=registry)
    sharded = load_retriever("bm25", {"index": str(index), "shards": SHARDS}, registry=registry)
    yield whole, sharded
    sharded.close()
    whole.close()


def answers(hits):
    return [[(doc.id, doc.score, doc.text) for doc in row] for row in hits]


@pytest.mark.parametrize("k", [1, 5, 40, 400])
def test_shard_actors_on_distinct_nodes_answer_as_the_whole_index(searchers, k):
    whole, sharded = searchers
    assert len(set(sharded.pool.nodes)) == SHARDS
    assert answers(sharded.search(QUERIES, k)) == answers(whole.search(QUERIES, k))
    assert sharded.metadata()["shards"] == SHARDS and sharded.contents() == whole.contents()


def test_a_killed_shard_actor_is_restarted_and_its_queries_sent_again(searchers, caplog):

    whole, sharded = searchers
    before = list(sharded.pool.restarts)
    killed(sharded.pool.actors[1])
    with caplog.at_level(logging.WARNING, logger="ragbench._retrieval.sharding.actors"):
        assert answers(sharded.search(QUERIES, 10)) == answers(whole.search(QUERIES, 10))
    assert sharded.pool.restarts == [before[0], before[1] + 1, before[2]]
    assert "shard 1 (passages 101..200" in caplog.text and "starting it again from its files" in caplog.text
    assert len(set(sharded.pool.nodes)) == SHARDS  # the freed node took it back


def test_a_shard_lost_for_good_fails_the_batch_naming_it_never_a_partial_answer(searchers, monkeypatch):

    from ragbench._retrieval.sharding import actors
    from ragbench.api.retrieval import RetrievalError

    whole, sharded = searchers
    monkeypatch.setattr(actors, "MAX_RESTARTS", 0)  # no restart: the first death is final for the batch
    killed(sharded.pool.actors[2])
    failed = sharded.search(QUERIES, 10)
    assert all(isinstance(result, RetrievalError) and "shard 2 (passages 201..300" in str(result) for result in failed)
    monkeypatch.setattr(actors, "MAX_RESTARTS", 3)
    assert answers(sharded.search(QUERIES, 10)) == answers(whole.search(QUERIES, 10))  # the next batch restarts it
