"""`--retriever tevatron_dense` (`browsecomp_plus_dense`): BrowseComp-Plus's dense searcher over Tevatron's index
shards, read as they are, without running what a pickle names.

The shards in tests/data/browsecomp_plus/dense were written by Tevatron's own encode driver, and expected.json holds
what BrowseComp-Plus's faiss_searcher.py (run unchanged) returned over them (record.py there, in a venv with
Tevatron), with the tiny Qwen3 encoder that tests/support/qwen3_embedding_fixtures.py makes again here, weight for weight.
"""

from __future__ import annotations

import json
import os
import pickle
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import TEST_DATA, needs
from ragbench._retrieval.dense.tevatron_shards import convert_command, read_shard
from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench.api import ConfigError
from ragbench.api.retrieval import RetrievalError
from ragbench.testing import installed_registry
from support.helpers import cli_here, samples
from support.qwen3_embedding_fixtures import corpus_rows, write_tiny_qwen3

pytestmark = needs("faiss", "transformers")  # not imported while the tests are collected

FILES = TEST_DATA / "browsecomp_plus" / "dense"
SHARDS = str(FILES / "corpus.shard*.pkl")
CORPUS = FILES / "corpus.jsonl"
EXPECTED = json.loads((FILES / "expected.json").read_text(encoding="utf-8"))
# float32: the searcher's own torch ops, so only another CPU's summation order could move a score, in its last bits;
# float16 runs under CPU autocast in bfloat16, whose step near 1 is 2**-8 (here the scores were bit-equal)
TOLERANCE = {"float32": 1e-6, "float16": 4e-3, "bfloat16": 4e-3}


@pytest.fixture(scope="module")
def tiny_qwen3(tmp_path_factory) -> Path:
    return write_tiny_qwen3(tmp_path_factory.mktemp("encoder") / "tiny-qwen3")


def retriever(model: Path, index: str = SHARDS, corpus: Path = CORPUS, **options):
    from ragbench._retrieval.dense.tevatron import TevatronDenseRetriever

    return TevatronDenseRetriever(index=index, model=str(model), corpus=str(corpus), **options)


@pytest.mark.parametrize("case", sorted(EXPECTED["cases"]))
def test_ids_and_scores_equal_browsecomp_plus_faiss_searcher_on_tevatrons_shards(tiny_qwen3, case):
    expected = EXPECTED["cases"][case]
    found = retriever(tiny_qwen3, torch_dtype=expected["torch_dtype"], max_length=expected["max_length"])
    hits = found.search(EXPECTED["queries"], EXPECTED["topk"])
    assert [[doc.id for doc in row] for row in hits] == [[hit[0] for hit in row] for row in expected["results"]]
    np.testing.assert_allclose(
        [[doc.score for doc in row] for row in hits],
        [[hit[1] for hit in row] for row in expected["results"]],
        rtol=0,
        atol=TOLERANCE[expected["torch_dtype"]],
    )
    texts = {row["docid"]: row["text"] for row in corpus_rows()}
    assert all(doc.text == texts[doc.id] for row in hits for doc in row)


def test_a_run_searches_the_shards_and_records_what_it_searched(tmp_path, tiny_qwen3):
    config = RunConfig.of(
        tasks=["demo"],
        system="vanilla",
        model="scripted:echo",
        retriever="browsecomp_plus_dense",
        retriever_args={"index": SHARDS, "model": str(tiny_qwen3), "corpus": str(CORPUS), "torch_dtype": "float32"},
        output=str(tmp_path / "run"),
        progress=False,
        bootstrap_iters=10,
        limit=2,
    )
    results = Evaluator(config, installed_registry()).run().results
    assert results["counts"]["demo"]["failed"] == 0
    meta = results["config"]["retriever_metadata"]
    assert meta["retriever"] == "tevatron_dense" and meta["vectors"] == 24 and meta["pooling"] == "eos"
    assert meta["task_prefix"].endswith("\nQuery:") and meta["max_length"] == 8192 and meta["normalize"] is True
    docs = samples(tmp_path / "run", "demo")[0]["prediction"]["docs"]
    assert docs and all(doc["id"] in {row["docid"] for row in corpus_rows()} for doc in docs)


# -- pickles: only what Tevatron's shards hold is rebuilt ----------------------------------------------------------


class RunsACommand:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {shlex.quote(str(self.marker))}",)


@pytest.mark.parametrize("where", ["whole", "in_docids", "after_embeddings"])
def test_a_pickle_that_would_run_a_command_is_refused_without_running_it(tmp_path, where):
    marker = tmp_path / "ran"
    hostile = RunsACommand(marker)
    embeddings = np.zeros((2, 4), dtype=np.float32)
    payload = {"whole": hostile, "in_docids": (embeddings, ["a", hostile]), "after_embeddings": (embeddings, hostile)}
    shard = tmp_path / "corpus.shard0.pkl"
    shard.write_bytes(pickle.dumps(payload[where]))
    with pytest.raises(ConfigError) as caught:
        read_shard(shard)
    assert not marker.exists()
    message = str(caught.value)
    assert "\n" not in message and "system" in message and "refused unread" in message
    assert convert_command(shard) in message


def test_an_object_array_is_refused_as_no_shard_holds_one(tmp_path):
    shard = tmp_path / "corpus.pkl"
    shard.write_bytes(pickle.dumps((np.array([[1.0, "x"]], dtype=object), ["a"])))
    with pytest.raises(ConfigError, match="numpy.dtype object"):
        read_shard(shard)


def test_the_refusals_conversion_command_writes_a_shard_read_the_same(tmp_path):
    shard = tmp_path / "corpus.shard0.pkl"
    shard.write_bytes((FILES / "corpus.shard0.pkl").read_bytes())
    command = shlex.split(convert_command(shard))
    subprocess.run([sys.executable, *command[1:]], check=True)
    from_pickle, from_npz = read_shard(shard), read_shard(shard.with_suffix(".npz"))
    np.testing.assert_array_equal(from_pickle[0], from_npz[0])
    assert from_pickle[1] == from_npz[1]


@settings(max_examples=40, deadline=None)
@given(
    embeddings=hnp.arrays(
        st.sampled_from([np.float16, np.float32, np.float64]),
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=5),
        elements=st.floats(-2, 2, width=16),
    ),
    texts=st.lists(st.text(max_size=8), min_size=5, max_size=5),
    protocol=st.integers(0, pickle.HIGHEST_PROTOCOL),
)
def test_any_float_shard_pickled_with_any_protocol_reads_back_equal(tmp_path_factory, embeddings, texts, protocol):
    shard = tmp_path_factory.mktemp("shard") / "corpus.pkl"
    docids = texts[: len(embeddings)]
    shard.write_bytes(pickle.dumps((embeddings, docids), protocol=protocol))
    read, read_ids = read_shard(shard)
    np.testing.assert_array_equal(read, embeddings.astype(np.float32))
    assert read.dtype == np.float32 and read_ids == docids


def test_a_truncated_shard_is_named_in_one_line(tmp_path):
    shard = tmp_path / "corpus.shard0.pkl"
    shard.write_bytes((FILES / "corpus.shard0.pkl").read_bytes()[:700])
    with pytest.raises(ConfigError, match="truncated") as caught:
        read_shard(shard)
    assert "\n" not in str(caught.value)


def test_docids_of_another_count_than_the_embeddings_are_refused(tmp_path):
    shard = tmp_path / "corpus.pkl"
    shard.write_bytes(pickle.dumps((np.zeros((3, 4), dtype=np.float32), ["a", "b"])))
    with pytest.raises(ConfigError, match="3 embeddings and 2 docids"):
        read_shard(shard)


# -- the retriever's checks --------------------------------------------------------------------------------------


def test_no_shard_found_is_named_in_one_line_by_the_cli(tmp_path):
    done = cli_here(
        "--tasks", "demo", "--model", "scripted:echo", "--retriever", "browsecomp_plus_dense",
        "--retriever-arg", f"index={tmp_path / 'corpus.shard*.pkl'}", "--retriever-arg", f"model={tmp_path}",
        "--retriever-arg", f"corpus={CORPUS}", "--output", str(tmp_path / "run"),
    )  # fmt: skip
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "no .pkl or .npz shard found" in done.stderr


def test_shards_of_another_dimension_than_the_encoder_are_refused(tmp_path, tiny_qwen3):
    (tmp_path / "corpus.pkl").write_bytes(pickle.dumps((np.zeros((2, 8), dtype=np.float32), ["500", "507"])))
    with pytest.raises(ConfigError, match="32-dimensional vectors.*8-dimensional"):
        retriever(tiny_qwen3, index=str(tmp_path))


def test_a_docid_the_corpus_lacks_fails_its_search_only(tmp_path, tiny_qwen3):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(row) + "\n" for row in corpus_rows() if row["docid"] != "549"))
    found = retriever(tiny_qwen3, corpus=corpus, torch_dtype="float32")
    hits = found.search(["camel in the desert", "the whale of the ocean"], 3)  # 549 first, then not in the top 3
    assert isinstance(hits[0], RetrievalError) and "docid 549" in str(hits[0])
    assert [doc.id for doc in hits[1]] == ["640", "626", "654"]
