"""Sharded lucene_bm25, flashrag_bm25, faiss_index and tevatron_dense without Ray: an index split into any number of
shards (or Tevatron's shard files served as they are), each shard searched apart and the answers merged by the
run's side, answers as the unsharded index: ids, order, scores and ties (what faiss promises aside: see
test_faiss_shards_*)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA, needs, plugins_read_once
from ragbench._retrieval.bm25.flashrag import FlashRagBM25Retriever
from ragbench._retrieval.bm25.numba_top_k import numba_top_k, pushed
from ragbench._retrieval.sharding.kind_lookup import sharded_kind
from ragbench._retrieval.sharding.layout import read_layout
from ragbench._retrieval.sharding.merge import merge_numba_top_k, merge_top_k
from ragbench._retrieval.sharding.split import split_index
from ragbench.api import ConfigError
from ragbench.api.retrieval import RetrievalError
from ragbench.testing import build_index, installed_registry

pytestmark = needs("bm25s")  # not imported while the tests are collected


REGISTRY = plugins_read_once()  # read once: the properties search each shard of each example
WORDS = ["river", "king", "queen", "castle", "song", "the", "of", "moses", "winter", "x", "running", "sang"]
FLASHRAG = TEST_DATA / "flashrag_bm25"
FAISS = TEST_DATA / "flashrag_faiss"
TEVATRON = TEST_DATA / "browsecomp_plus" / "dense"
texts = st.lists(st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join), min_size=1, max_size=25)
queries = st.lists(st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join), min_size=1, max_size=4)


def sharded_search(front, shards: int, queries: list[str], k: int):
    """`front` searched through its `shards` shards, each searched apart (as its Ray actor would), then merged."""
    layout = front.layout(shards)
    payload = front.payload(queries)
    answers = [
        sharded_kind(REGISTRY, layout.retriever).search(shard, front.shard_options()).top_k(payload, k)
        for shard in layout.shards
    ]
    return front.answers(queries, answers, k)


def answers(results):
    return [
        str(result) if isinstance(result, RetrievalError) else [(doc.id, doc.score, doc.text) for doc in result]
        for result in results
    ]


@settings(max_examples=25, deadline=None)
@given(texts, st.data(), st.integers(0, 30), queries)
def test_a_split_lucene_bm25_index_answers_exactly_as_the_whole_one(corpus, data, k, asked):
    """Ids in another order than the passages' (ties go by id), duplicate passages, passages without words: the
    same hits, order and (Anserini-adjusted) scores."""
    corpus = [*corpus, "river king"]
    ids = data.draw(st.lists(st.text("ab1", min_size=1, max_size=4), min_size=len(corpus), max_size=len(corpus),
                             unique=True))  # fmt: skip
    shards = data.draw(st.integers(1, len(corpus)))
    registry = REGISTRY
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.jsonl"
        path.write_text("".join(json.dumps({"id": i, "title": "", "text": t}) + "\n" for i, t in zip(ids, corpus)))
        build_index(path, Path(tmp) / "index", "lucene_bm25", {}, progress=False, registry=registry)
        whole = registry.load("retrievers", "lucene_bm25")(str(Path(tmp) / "index"))
        split_index(Path(tmp) / "index", shards, registry=REGISTRY)
        front = sharded_kind(REGISTRY, "lucene_bm25").front(str(Path(tmp) / "index"))
        try:
            assert answers(sharded_search(front, shards, asked, k)) == answers(whole.search(asked, k))
        finally:
            front.close()
            whole.close()


@settings(max_examples=25, deadline=None)
@given(texts, st.data(), st.integers(0, 30), queries, st.booleans())
def test_a_split_flashrag_bm25_index_answers_exactly_as_the_whole_one(corpus, data, k, asked, flashrag_built):
    """Zero-score padding in bm25s's numba order, queries with no word (that query's error), a folder FlashRAG
    built (no manifest.json) or ragbench did."""
    corpus = [*corpus, "river king"]
    shards = data.draw(st.integers(1, len(corpus)))
    registry = REGISTRY
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.jsonl"
        path.write_text("".join(json.dumps({"id": str(i), "contents": t}) + "\n" for i, t in enumerate(corpus)))
        index = Path(tmp) / "index"
        build_index(path, index, "flashrag_bm25", {"language": "en"}, progress=False, registry=registry)
        if flashrag_built:
            (index / "manifest.json").unlink()
        whole = FlashRagBM25Retriever(index=str(index), corpus=str(path))
        split_index(index, shards, registry=REGISTRY)
        front = sharded_kind(REGISTRY, "flashrag_bm25").front(index=str(index), corpus=str(path))
        try:
            assert answers(sharded_search(front, shards, asked, k)) == answers(whole.search(asked, k))
        finally:
            front.close()
            whole.close()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=1, max_size=60), st.data(), st.integers(0, 70))
def test_bm25s_numba_heap_replayed_over_the_shards_candidates_is_the_whole_arrays(scores, data, k):
    scores = np.array(scores, dtype=np.float32)
    cuts = (
        sorted(data.draw(st.sets(st.integers(1, len(scores) - 1), max_size=len(scores) - 1))) if len(scores) > 1 else []
    )
    bounds = [0, *cuts, len(scores)]
    parts = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        places = pushed(scores[start:stop], k)
        parts.append((scores[start:stop][places], places + start))
    merged_scores, merged_ids = merge_numba_top_k(parts, k)
    expected_scores, expected_ids = numba_top_k(scores, k)
    assert merged_ids.tolist() == expected_ids.tolist() and merged_scores.tobytes() == expected_scores.tobytes()


@pytest.mark.parametrize("shards", [1, 2, 3, 7])
def test_flashrags_own_bm25_folder_split_answers_as_flashrag_recorded(tmp_path, shards):
    """tests/data/flashrag_bm25: FlashRAG's own index (no manifest) and what its search returned, ties included."""
    expected = json.loads((FLASHRAG / "expected.json").read_text(encoding="utf-8"))
    index = tmp_path / "bm25"
    shutil.copytree(FLASHRAG / "bm25", index)
    before = {p.name: p.read_bytes() for p in index.iterdir()}
    split_index(index, shards, registry=installed_registry())
    assert {p.name: p.read_bytes() for p in index.iterdir() if p.is_file()} == before  # its files only read
    front = sharded_kind(installed_registry(), "flashrag_bm25").front(
        index=str(index), corpus=str(FLASHRAG / "corpus.jsonl")
    )
    whole = FlashRagBM25Retriever(index=str(FLASHRAG / "bm25"), corpus=str(FLASHRAG / "corpus.jsonl"))
    try:
        for key, case in expected["search"].items():
            k, query = key.split("\t", 1)
            [found] = sharded_search(front, shards, [query], int(k))
            assert answers([found]) == answers(whole.search([query], int(k)))
            if "error" not in case:
                assert [d.id for d in found] == case["ids"] and [d.score for d in found] == case["scores"]
    finally:
        front.close()
        whole.close()


VALUES = st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(1, 6), st.data(), st.integers(0, 70), st.integers(1, 25))
def test_faiss_shards_merged_give_the_whole_flat_indexs_scores_and_passages_above_ties(rows, dim, data, k, asked):
    """A flat index's shards: the same scores bit for bit, and the same passages in the same order wherever scores
    differ. Equal scores are ordered by passage number; one faiss index orders them its heap's own way (not by
    number, not reproducible from shards), so within a run of equal scores, and at the k-th place, passages may
    differ (docs/scale-out.md)."""
    import faiss

    matrix = np.array(data.draw(st.lists(st.lists(VALUES, min_size=dim, max_size=dim), min_size=rows, max_size=rows)))
    vectors = np.array(data.draw(st.lists(st.lists(VALUES, min_size=dim, max_size=dim), min_size=asked,
                                          max_size=asked)), dtype=np.float32)  # fmt: skip  # 20+: faiss's BLAS path
    shards = data.draw(st.integers(1, rows))
    whole = faiss.IndexFlatIP(dim)
    whole.add(matrix.astype(np.float32))
    with tempfile.TemporaryDirectory() as tmp:
        faiss.write_index(whole, str(Path(tmp) / "e5_Flat.index"))
        folder = split_index(Path(tmp) / "e5_Flat.index", shards, registry=REGISTRY)
        assert folder.name == f"e5_Flat.index.shards-{shards}"
        layout = read_layout(folder, Path(tmp) / "e5_Flat.index")
        parts = [sharded_kind(REGISTRY, "faiss_index").search(shard, {}).top_k(vectors, k) for shard in layout.shards]
    scores, labels = whole.search(vectors, k) if k else (np.zeros((asked, 0)), np.zeros((asked, 0), np.int64))
    for query in range(asked):
        merged_scores, merged_ids = merge_top_k([part[query] for part in parts], k)
        kept = labels[query] >= 0
        assert merged_scores.tobytes() == scores[query][kept].tobytes()
        for score in set(merged_scores.tolist()):  # each run of equal scores: the same passages, unless cut at k
            got, expected = merged_ids[merged_scores == score], labels[query][kept][scores[query][kept] == score]
            if score != merged_scores[-1]:
                assert sorted(got.tolist()) == sorted(expected.tolist())


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    pytest.importorskip("faiss")
    pytest.importorskip("transformers")
    from support.flashrag_faiss_fixtures import write_tiny_bert

    return write_tiny_bert(tmp_path_factory.mktemp("encoder") / "tiny-bert")


@pytest.mark.parametrize("shards", [1, 3, 40])
def test_flashrags_own_flat_faiss_index_split_answers_as_the_whole_one(tmp_path, tiny_bert, shards):
    from ragbench._retrieval.dense.faiss_index import FaissIndexRetriever
    from support.flashrag_faiss_fixtures import QUERIES

    index = tmp_path / "e5_Flat.index"
    shutil.copyfile(FAISS / "e5_Flat.index", index)
    split_index(index, shards, registry=installed_registry())
    options = {"index": str(index), "corpus": str(FAISS / "corpus.jsonl"), "model": str(tiny_bert)}
    whole, front = FaissIndexRetriever(**options), sharded_kind(installed_registry(), "faiss_index").front(**options)
    try:
        for k in (1, 5, 50):
            assert answers(sharded_search(front, shards, QUERIES, k)) == answers(whole.search(QUERIES, k))
        assert front.metadata() == whole.metadata()
    finally:
        front.close()
        whole.close()


@pytest.mark.parametrize("name", ["dpr_IVF2,Flat.index", "bge_HNSW8.index"])
def test_an_approximate_faiss_index_is_refused_in_one_line_and_nothing_is_written(tmp_path, name):
    pytest.importorskip("faiss")
    from support.helpers import cli_here  # in this process: a split and its refusal start nothing

    shutil.copyfile(FAISS / name, tmp_path / name)
    refused = cli_here("index", "shard", "--index", str(tmp_path / name), "--shards", "2")
    assert refused.returncode != 0 and len(refused.stderr.strip().splitlines()) == 1
    assert "only flat inner-product faiss indexes" in refused.stderr and "approximate" in refused.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


@settings(max_examples=20, deadline=None)
@given(kept=st.floats(0, 1, exclude_max=True))
def test_a_flat_faiss_file_cut_short_past_its_header_is_refused_as_damaged_in_one_line(kept):
    """Its header intact (the vector count read), the rest cut anywhere: one line naming the file as damaged and
    the fix, no faiss traceback (issue 78), nothing written beside it."""
    pytest.importorskip("faiss")
    from ragbench._retrieval.dense.faiss_index import HEADER
    from support.helpers import cli_here  # in this process: a split and its refusal start nothing

    whole = (FAISS / "e5_Flat.index").read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        damaged = Path(tmp) / "e5_Flat.index"
        damaged.write_bytes(whole[: HEADER.size + int(kept * (len(whole) - HEADER.size))])
        refused = cli_here("index", "shard", "--index", str(damaged), "--shards", "2")
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr[-2000:]
        assert f"index shard: {damaged} is damaged (faiss cannot read it: " in refused.stderr
        assert "build it again" in refused.stderr
        assert sorted(p.name for p in Path(tmp).iterdir()) == [damaged.name]


@pytest.fixture(scope="module")
def tiny_qwen3(tmp_path_factory) -> Path:
    pytest.importorskip("faiss")
    pytest.importorskip("transformers")
    from support.qwen3_embedding_fixtures import write_tiny_qwen3

    return write_tiny_qwen3(tmp_path_factory.mktemp("encoder") / "tiny-qwen3")


@pytest.mark.parametrize("shards", [1, 2])
def test_tevatrons_shard_files_served_apart_answer_as_the_whole_index(tiny_qwen3, shards):
    from ragbench._retrieval.dense.tevatron import TevatronDenseRetriever

    options = {
        "index": str(TEVATRON / "corpus.shard*.pkl"),
        "model": str(tiny_qwen3),
        "corpus": str(TEVATRON / "corpus.jsonl"),
    }
    asked = ["what is the river", "a king and a queen", "winter song", ""]
    whole, front = (
        TevatronDenseRetriever(**options),
        sharded_kind(installed_registry(), "tevatron_dense").front(**options),
    )
    try:
        for k in (1, 3, 1000):
            assert answers(sharded_search(front, shards, asked, k)) == answers(whole.search(asked, k))
        assert front.metadata() == whole.metadata() and front.contents() == whole.contents()
        with pytest.raises(ConfigError, match=r"shards=3: .* names 2 shard file\(s\); choose 1 to 2"):
            front.layout(3)
    finally:
        front.close()
        whole.close()


@pytest.mark.parametrize("kind", ["lucene_bm25", "flashrag_bm25"])
def test_a_cut_shard_file_of_a_new_kind_is_refused_in_one_line_naming_it(tmp_path, kind):
    from ragbench.testing import load_retriever

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": str(i), "contents": " ".join(WORDS[i % 9 : i % 9 + 3])}) + "\n"
                              for i in range(12)))  # fmt: skip
    options = {"language": "en"} if kind == "flashrag_bm25" else {}
    build_index(corpus, tmp_path / "index", kind, options, progress=False, registry=installed_registry())
    folder = split_index(tmp_path / "index", 3, registry=installed_registry())
    cut = sorted(p for p in (folder / "001").rglob("*.npy"))[0]
    cut.write_bytes(cut.read_bytes()[:-3])
    args = {"index": str(tmp_path / "index"), "shards": 3, **({"corpus": str(corpus)} if options else {})}
    with pytest.raises(ConfigError) as caught:
        load_retriever(kind, args, registry=installed_registry())
    message = str(caught.value)
    assert "\n" not in message and cut.name in message and "--overwrite" in message
