"""Sharded indexes without Ray: a split index's shards, searched one by one and merged, answer exactly as the
unsharded index (ids, order, scores, ties included), whatever the corpus, the split and k; damaged shards are
refused in one line."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import needs, plugins_read_once
from ragbench._retrieval.bm25.retriever import BM25Retriever
from ragbench._retrieval.dense.exact_search import inner_product_top_k
from ragbench._retrieval.ranking import best_k
from ragbench._retrieval.sharding.dense.split import split_dense
from ragbench._retrieval.sharding.kind_lookup import sharded_kind
from ragbench._retrieval.sharding.layout import Shard, read_layout
from ragbench._retrieval.sharding.merge import merge_top_k, shard_ranges
from ragbench._retrieval.sharding.split import split_index
from ragbench.api import ConfigError
from ragbench.testing import build_index, installed_registry, load_retriever

pytestmark = needs("bm25s")  # not imported while the tests are collected

REGISTRY = plugins_read_once()  # read once: the properties search each shard of each example
WORDS = ["river", "king", "queen", "castle", "song", "the", "of", "moses", "winter", "x"]
TIED = st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0])  # few values: many ties


def splits(n: int) -> st.SearchStrategy[int]:
    return st.integers(1, n)


@settings(max_examples=200)
@given(st.lists(TIED, min_size=1, max_size=40), st.data(), st.integers(0, 45))
def test_merging_shards_top_k_is_the_whole_arrays_top_k_ties_by_smaller_number(scores, data, k):
    scores = np.array(scores, dtype=np.float32)
    cuts = (
        sorted(data.draw(st.sets(st.integers(1, len(scores) - 1), max_size=len(scores) - 1))) if len(scores) > 1 else []
    )
    bounds = [0, *cuts, len(scores)]
    parts = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        part_scores, part_ids = best_k(scores[start:stop], k)
        parts.append((part_scores, part_ids + start))
    merged_scores, merged_ids = merge_top_k(parts, k)
    expected_scores, expected_ids = best_k(scores, k)
    assert merged_ids.tolist() == expected_ids.tolist()
    assert merged_scores.tobytes() == expected_scores.tobytes()


@given(st.integers(1, 500), st.data())
def test_shard_ranges_cover_the_corpus_in_order_sizes_within_one(doc_count, data):
    shards = data.draw(st.integers(1, doc_count))
    ranges = shard_ranges(doc_count, shards)
    assert ranges[0][0] == 0 and ranges[-1][1] == doc_count and len(ranges) == shards
    assert all(a[1] == b[0] for a, b in zip(ranges[:-1], ranges[1:]))
    sizes = [stop - start for start, stop in ranges]
    assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


def merged_search(kind, layout, payload, k, options):
    answers = [sharded_kind(REGISTRY, kind).search(shard, options).top_k(payload, k) for shard in layout.shards]
    return [merge_top_k([answer[query] for answer in answers], k) for query in range(len(payload))]


def write_corpus(folder: Path, texts: list[str]) -> Path:
    path = folder / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "title": "", "text": t}) + "\n" for i, t in enumerate(texts)))
    return path


texts = st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join), min_size=1, max_size=30)


@settings(max_examples=25)
@given(texts, st.data(), st.integers(0, 35), st.sampled_from(["lucene", "bm25+"]))
def test_a_split_bm25_index_answers_exactly_as_the_whole_one(corpus_texts, data, k, method):
    """Duplicate passages, passages without words, queries of unknown words or stopwords alone: the merged
    answer is the unsharded one, scores bit-equal (each posting's score is the build's, global statistics), and
    holds only passages that hold a word of the query."""
    corpus_texts = [*corpus_texts, "river king"]  # at least one passage with words
    shards = data.draw(st.integers(1, len(corpus_texts)))
    queries = data.draw(st.lists(st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join), min_size=1, max_size=4))
    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "index"
        registry = REGISTRY
        build_index(write_corpus(Path(tmp), corpus_texts), index, "bm25", {"method": method}, progress=False,
                    registry=registry)  # fmt: skip
        whole = BM25Retriever(str(index))
        expected = whole.search(queries, k)
        layout = read_layout(split_index(index, shards, registry=REGISTRY), index)
        tokens = __import__("ragbench._retrieval.bm25.retriever", fromlist=["x"]).query_tokens(
            queries, whole.stopwords, whole.stemmer, whole.jieba
        )
        merged = merged_search("bm25", layout, tokens, k, {})
        for query, hits, (scores, ids) in zip(queries, expected, merged):
            assert [int(h.id) for h in hits] == ids.tolist()
            words = set(query.split()) - {"the", "of", "x"}  # stopwords, and a one-letter word: no term
            assert all(words & set(corpus_texts[i].split()) for i in ids.tolist())  # no zero-score padding
            assert np.array([h.score for h in hits], dtype=np.float32).tobytes() == scores.astype(np.float32).tobytes()
        whole.close()


@settings(max_examples=40)
@given(st.integers(1, 40), st.integers(1, 6), st.data(), st.integers(0, 45), st.sampled_from(["float16", "float32"]))
def test_split_dense_embeddings_answer_exactly_as_the_whole_matrix(rows, dim, data, k, dtype):
    """Equal vectors (ties) included; the unsharded search reads the matrix in chunks of chunk_rows too."""
    values = st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0])
    matrix = np.array(data.draw(st.lists(st.lists(values, min_size=dim, max_size=dim), min_size=rows, max_size=rows)))
    matrix = matrix.astype(dtype)
    queries = np.array(data.draw(st.lists(st.lists(values, min_size=dim, max_size=dim), min_size=1, max_size=3)))
    queries = queries.astype(np.float32)
    shards, chunk_rows = data.draw(st.integers(1, rows)), data.draw(st.integers(1, 50))
    with tempfile.TemporaryDirectory() as tmp:
        source, folders = Path(tmp) / "source", [Path(tmp) / f"{i}" for i in range(shards)]
        for folder in [source, *folders]:
            folder.mkdir()
        np.save(source / "embeddings.npy", matrix)
        ranges = shard_ranges(rows, shards)
        split_dense(source, folders, ranges)
        layout_shards = [Shard(i, f, a, b) for i, (f, (a, b)) in enumerate(zip(folders, ranges))]
        layout = type("L", (), {"shards": layout_shards})
        merged = merged_search("dense", layout, queries, k, {"chunk_rows": chunk_rows, "corpus_rows": rows})
        scores, ids = inner_product_top_k(queries, np.load(source / "embeddings.npy", mmap_mode="r"), k, chunk_rows)
        for row, (merged_scores, merged_ids) in enumerate(merged):
            assert merged_ids.tolist() == ids[row].tolist()
            assert merged_scores.tobytes() == scores[row].tobytes()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 1200), st.sampled_from([8, 64, 384]), st.integers(1, 6), st.data())
def test_split_dense_scores_are_the_whole_matrixs_bit_for_bit_whatever_the_vectors(rows, dim, asked, data):
    """Vectors of any floats, each backend: BLAS picks its kernel and summation order by a block's shape (a shard's
    rows scored alone gave other last bits, 4e-7 relative), so a shard scores its rows in the whole corpus's
    blocks; ids, order and scores are the unsharded search's, bit for bit."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    dtype, backend = data.draw(st.sampled_from(["float16", "float32"])), data.draw(st.sampled_from(["numpy", "faiss"]))
    matrix = rng.standard_normal((rows, dim)).astype(dtype)
    queries = rng.standard_normal((asked, dim)).astype(np.float32)
    shards, k = data.draw(st.integers(1, min(rows, 8))), data.draw(st.integers(0, 25))
    chunk_rows = data.draw(st.sampled_from([32768, rows, rows // 3 + 1, 97]))
    with tempfile.TemporaryDirectory() as tmp:
        source, folders = Path(tmp) / "source", [Path(tmp) / f"{i}" for i in range(shards)]
        for folder in [source, *folders]:
            folder.mkdir()
        np.save(source / "embeddings.npy", matrix)
        ranges = shard_ranges(rows, shards)
        split_dense(source, folders, ranges)
        layout = type("L", (), {"shards": [Shard(i, f, a, b) for i, (f, (a, b)) in enumerate(zip(folders, ranges))]})
        options = {"chunk_rows": chunk_rows, "backend": backend, "corpus_rows": rows}
        merged = merged_search("dense", layout, queries, k, options)
        whole = np.load(source / "embeddings.npy", mmap_mode="r")
        scores, ids = inner_product_top_k(queries, whole, k, chunk_rows, backend)
        for row, (merged_scores, merged_ids) in enumerate(merged):
            assert merged_ids.tolist() == ids[row].tolist()
            assert merged_scores.tobytes() == scores[row].tobytes()


@pytest.fixture
def bm25_index(tmp_path):
    index = tmp_path / "index"
    texts = [" ".join(WORDS[i % 7 : i % 7 + 3]) for i in range(20)]
    build_index(write_corpus(tmp_path, texts), index, "bm25", {}, progress=False, registry=installed_registry())
    return index


def damage_truncate(folder: Path) -> None:
    path = folder / "001" / "bm25" / "data.csc.index.npy"
    path.write_bytes(path.read_bytes()[:-4])


def damage_ranges(folder: Path) -> None:
    record = json.loads((folder / "shards.json").read_text())
    record["shards"][1]["start"] += 1
    (folder / "shards.json").write_text(json.dumps(record))


def damage_missing(folder: Path) -> None:
    (folder / "002" / "bm25" / "vocab.index.json").unlink()


def damage_not_json(folder: Path) -> None:
    (folder / "shards.json").write_text("{")


@pytest.mark.parametrize("damage", [damage_truncate, damage_ranges, damage_missing, damage_not_json])
def test_a_damaged_shard_or_shards_json_is_refused_in_one_line_naming_it(bm25_index, damage):
    damage(split_index(bm25_index, 3, registry=installed_registry()))
    with pytest.raises(ConfigError) as caught:
        load_retriever("bm25", {"index": str(bm25_index), "shards": 3}, registry=installed_registry())
    message = str(caught.value)
    assert "\n" not in message and "shards-3" in message and "ragbench index shard" in message


def test_shards_of_an_index_built_again_are_refused(bm25_index, tmp_path):
    split_index(bm25_index, 2, registry=installed_registry())
    manifest = json.loads((bm25_index / "manifest.json").read_text())
    manifest["build_seconds"] += 1  # another build of the same folder
    (bm25_index / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match="another build of the index"):
        load_retriever("bm25", {"index": str(bm25_index), "shards": 2}, registry=installed_registry())


def test_an_index_not_split_into_that_many_shards_names_the_command(bm25_index):
    with pytest.raises(ConfigError, match=r"no 4 shards .*ragbench index shard --index .* --shards 4"):
        load_retriever("bm25", {"index": str(bm25_index), "shards": 4}, registry=installed_registry())


def test_splitting_leaves_the_index_files_as_they_were(bm25_index):
    before = {p: p.read_bytes() for p in bm25_index.rglob("*") if p.is_file()}
    split_index(bm25_index, 3, registry=installed_registry())
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(p.name for p in bm25_index.iterdir() if p.name.startswith((".", "shards"))) == ["shards-3"]


def test_index_shard_command_splits_once_and_refuses_an_index_it_cannot_shard_in_one_line(bm25_index, tmp_path):
    from support.helpers import cli_here  # in this process: a split and its refusal start nothing

    done = cli_here("index", "shard", "--index", str(bm25_index), "--shards", "2")
    assert done.returncode == 0 and "2 shards of" in done.stdout
    assert read_layout(bm25_index / "shards-2", bm25_index).doc_count == 20
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "manifest.json").write_text(
        json.dumps({**json.loads((bm25_index / "manifest.json").read_text()), "retriever": "splade"})
    )
    refused = cli_here("index", "shard", "--index", str(tmp_path / "fake"), "--shards", "2")
    assert (
        refused.returncode != 0
        and "holds a splade index; only bm25, lucene_bm25, flashrag_bm25, dense, faiss_index" in refused.stderr
    )
    assert len(refused.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def split_once(tmp_path_factory):
    """A bm25 index of 20 passages split into 3 shards, kept pristine: each example damages a copy."""
    folder = tmp_path_factory.mktemp("pristine")
    texts = [" ".join(WORDS[i % 7 : i % 7 + 3]) for i in range(20)]
    build_index(
        write_corpus(folder, texts), folder / "index", "bm25", {}, progress=False, registry=installed_registry()
    )
    split_index(folder / "index", 3, registry=installed_registry())
    return folder / "index"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 40) | st.text(max_size=5), lambda inner: st.lists(inner, max_size=3)
)


@settings(max_examples=30)
@given(st.data())
def test_any_cut_shard_file_or_changed_shards_json_field_is_refused_in_one_line(split_once, data):
    import shutil

    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "index"
        shutil.copytree(split_once, index)
        folder = index / "shards-3"
        if data.draw(st.booleans()):
            files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "shards.json")
            path = data.draw(st.sampled_from(files))
            path.write_bytes(path.read_bytes()[: data.draw(st.integers(0, path.stat().st_size - 1))])
            named = path.name
        else:
            record = json.loads((folder / "shards.json").read_text())
            target = record if data.draw(st.booleans()) else record["shards"][data.draw(st.integers(0, 2))]
            key = data.draw(st.sampled_from(sorted(target)))
            value = data.draw(JSON_VALUES.filter(lambda v, old=target[key]: v != old))
            target[key] = value
            (folder / "shards.json").write_text(json.dumps(record))
            named = "shards.json"
        with pytest.raises(ConfigError) as caught:
            load_retriever("bm25", {"index": str(index), "shards": 3}, registry=installed_registry())
        message = str(caught.value)  # the fix: split again, after moving away a shards.json no longer ragbench's
        assert "\n" not in message and ("--overwrite" in message or "move it away, then split" in message)
        assert "shards-3" in message and (named == "shards.json" or named in message)


@given(st.integers(-3, 60).filter(lambda n: not 1 <= n <= 20))
def test_a_shard_count_outside_the_passages_is_refused_and_writes_nothing(split_once, shards):
    with pytest.raises(ConfigError, match=r"--shards -?\d+: choose 1 to 20"):
        split_index(split_once, shards, registry=installed_registry())
    assert sorted(p.name for p in split_once.iterdir() if p.name.startswith((".", "shards"))) == ["shards-3"]
