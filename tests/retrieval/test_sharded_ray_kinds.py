"""lucene_bm25, flashrag_bm25, faiss_index and tevatron_dense served by shard actors on the tests' shared local 3-node
Ray cluster (`ray_cluster`), loaded as a run loads them (`--retriever-arg shards=S`): one actor a shard on distinct
nodes, the same answers as the unsharded retriever; each test's actors closed before the next starts."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

from conftest import TEST_DATA, needs
from ragbench.testing import build_index, cli, installed_registry, load_retriever
from support.retrieval_samples import passages, write_dpr_tsv

pytestmark = needs("bm25s", "ray")  # not imported while the tests are collected

QUERIES = ["king queen castle", "running river", "Moses the prophet", "the a of", "zzz unknown words", "song"]


def shard(index, shards: int) -> None:
    """`ragbench index shard --index INDEX --shards S`, as a user splits an index."""
    result = CliRunner().invoke(cli, ["index", "shard", "--index", str(index), "--shards", str(shards)])
    assert result.exit_code == 0, result.output


def answers(results):
    return [[(doc.id, doc.score, doc.text) for doc in row] if isinstance(row, list) else str(row) for row in results]


def same_answers(kind: str, args: dict, shards: int, queries: list[str], ks=(1, 5, 50)) -> None:
    registry = installed_registry()
    whole = load_retriever(kind, args, registry=registry)
    sharded = load_retriever(kind, {**args, "shards": shards}, registry=registry)
    try:
        assert len(set(sharded.pool.nodes)) == shards  # one actor a node
        for k in ks:
            assert answers(sharded.search(queries, k)) == answers(whole.search(queries, k))
        assert sharded.metadata()["shards"] == shards and sharded.contents() == whole.contents()
    finally:
        sharded.close()
        whole.close()


def test_lucene_bm25_shards_on_ray_answer_as_the_whole_index(tmp_path, ray_cluster):
    index = tmp_path / "index"
    corpus = write_dpr_tsv(tmp_path / "psgs_w100.tsv", passages(150))
    build_index(corpus, index, "lucene_bm25", {}, progress=False, registry=installed_registry())
    shard(index, 2)
    same_answers("lucene_bm25", {"index": str(index)}, 2, QUERIES)


def test_flashrags_own_bm25_folder_in_shards_on_ray_answers_as_the_whole(tmp_path, ray_cluster):
    shutil.copytree(TEST_DATA / "flashrag_bm25" / "bm25", tmp_path / "bm25")
    shard(tmp_path / "bm25", 2)
    args = {"index": str(tmp_path / "bm25"), "corpus": str(TEST_DATA / "flashrag_bm25" / "corpus.jsonl")}
    same_answers("flashrag_bm25", args, 2, [*QUERIES, "river bridge"])  # "the a of": each failing alike


def test_flashrags_flat_faiss_index_in_shards_on_ray_answers_as_the_whole(tmp_path, ray_cluster):
    pytest.importorskip("faiss")
    pytest.importorskip("transformers")
    from support.flashrag_faiss_fixtures import QUERIES as ASKED
    from support.flashrag_faiss_fixtures import write_tiny_bert

    shutil.copyfile(TEST_DATA / "flashrag_faiss" / "e5_Flat.index", tmp_path / "e5_Flat.index")
    shard(tmp_path / "e5_Flat.index", 2)
    model = write_tiny_bert(tmp_path / "tiny-bert")
    args = {"index": str(tmp_path / "e5_Flat.index"), "corpus": str(TEST_DATA / "flashrag_faiss" / "corpus.jsonl")}
    same_answers("faiss_index", {**args, "model": str(model)}, 2, ASKED)


def test_tevatron_shard_files_each_served_by_an_actor_answer_as_the_whole(tmp_path, ray_cluster):
    pytest.importorskip("faiss")
    pytest.importorskip("transformers")
    from support.qwen3_embedding_fixtures import write_tiny_qwen3

    files = TEST_DATA / "browsecomp_plus" / "dense"
    args = {"index": str(files / "corpus.shard*.pkl"), "corpus": str(files / "corpus.jsonl")}
    model = write_tiny_qwen3(tmp_path / "tiny-qwen3")
    same_answers("browsecomp_plus_dense", {**args, "model": str(model)}, 2, QUERIES[:3], ks=(1, 100))
