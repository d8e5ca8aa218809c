"""Sharded search on the tests' shared local 3-node Ray cluster (`ray_cluster`), each test's shards closed before the
next starts (one CPU a node): a whole evaluation run searching the shards scores as the run on the whole index, and
dense shards served by actors answer as the whole matrix; TREC RAG 2024's reproduction row built and searched on the
cluster scores as Anserini's run."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_trec_rag24_reproduction import ANSERINI_ON_SAMPLE, CORPUS, QRELS, ROW, TOPICS

from conftest import needs
from ragbench._retrieval.dense.exact_search import inner_product_top_k
from ragbench._retrieval.sharding.actors import ShardPool
from ragbench._retrieval.sharding.dense.split import split_dense
from ragbench._retrieval.sharding.kind_lookup import sharded_kind
from ragbench._retrieval.sharding.layout import Layout, Shard, layout_record, read_layout
from ragbench._retrieval.sharding.merge import merge_top_k, shard_ranges
from ragbench._retrieval.sharding.split import split_index
from ragbench.testing import build_index, installed_registry
from support.helpers import cli_here, run
from support.retrieval_samples import passages, write_dpr_tsv

pytestmark = needs("bm25s", "ray")  # not imported while the tests are collected

SHARDS = 2  # more than one: the run's hits merged across shards (3 on the run's own local Ray: a CPU short)
TASK = "nq_open_flashrag"


def test_a_run_searching_the_shards_scores_as_the_run_on_the_whole_index(tmp_path, ray_cluster):
    index = tmp_path / "index"
    corpus = write_dpr_tsv(tmp_path / "psgs_w100.tsv", passages(120))
    build_index(corpus, index, "bm25", {}, progress=False, registry=installed_registry())
    split_index(index, SHARDS, registry=installed_registry())
    data = tmp_path / "nq.jsonl"
    questions = ["Which king built the castle?", "Who was Moses?", "the song of winter", "zzz"]
    data.write_text("".join(json.dumps({"id": str(i), "question": q, "golden_answers": ["castle"]}) + "\n"
                            for i, q in enumerate(questions)))  # fmt: skip
    common = {"tasks": [TASK], "data": {TASK: str(data)}, "system": "vanilla"}
    whole = run(
        tmp_path, "whole", model="scripted:echo", retriever="bm25", retriever_args={"index": str(index)}, **common
    )
    sharded = run(tmp_path, "sharded", model="scripted:echo", retriever="bm25",
                  retriever_args={"index": str(index), "shards": SHARDS}, **common)  # fmt: skip
    assert sharded["results"] == whole["results"]
    predictions = [
        [
            (line["id"], line["prediction"])
            for line in map(json.loads, (tmp_path / name / "samples" / f"{TASK}.jsonl").read_text().splitlines())
        ]
        for name in ("whole", "sharded")
    ]
    assert predictions[0] == predictions[1] and any(len(docs["docs"]) == 5 for _, docs in predictions[0])


def test_dense_shards_served_by_actors_answer_as_the_whole_matrix(tmp_path, ray_cluster):
    """Ties, and floats of any bits scored by single-threaded actors: the whole matrix's bits (a shard's 300 rows
    scored alone went through other BLAS kernels than the whole 600's)."""
    rng = np.random.default_rng(3)
    matrix = rng.choice([-1.0, 0.0, 0.5, 1.0], size=(600, 384)).astype(np.float16)  # many equal rows: ties
    matrix[::3] = rng.standard_normal((200, 384))
    np.save(tmp_path / "embeddings.npy", matrix)
    queries = rng.choice([-1.0, 0.5, 1.0], size=(3, 384)).astype(np.float32)  # 3 x 300 x 384: a small product
    queries[::2] = rng.standard_normal((2, 384))
    ranges, folders = shard_ranges(600, 2), [tmp_path / "0", tmp_path / "1"]
    for folder in folders:
        folder.mkdir()
    split_dense(tmp_path, folders, ranges)
    layout = Layout(tmp_path, "dense", 600, [Shard(i, f, *r) for i, (f, r) in enumerate(zip(folders, ranges))])
    pool = ShardPool(
        layout, sharded_kind(installed_registry(), layout.retriever).search, {"backend": "numpy", "corpus_rows": 600}
    )
    try:
        answers = pool.top_k(queries, 30)
    finally:
        pool.close()
    scores, ids = inner_product_top_k(queries, np.load(tmp_path / "embeddings.npy"), 30)
    for row in range(3):
        merged_scores, merged_ids = merge_top_k([answer[row] for answer in answers], 30)
        assert merged_ids.tolist() == ids[row].tolist() and merged_scores.tobytes() == scores[row].tobytes()


def test_a_shard_actor_refuses_a_file_swapped_after_the_run_read_the_layout(tmp_path, ray_cluster):
    """The actor checks the files it loads (a node's own copy, a restart): never searched."""
    import pytest

    from ragbench.api import ConfigError

    np.save(tmp_path / "embeddings.npy", np.random.default_rng(4).standard_normal((90, 8)).astype(np.float16))
    folder, ranges = tmp_path / "shards-2", shard_ranges(90, 2)
    folders = [folder / "000", folder / "001"]
    for shard_folder in folders:
        shard_folder.mkdir(parents=True)
    split_dense(tmp_path, folders, ranges)
    (folder / "shards.json").write_text(layout_record("dense", 90, tmp_path, folders, ranges))
    layout = read_layout(folder, tmp_path)
    first, second = (shard_folder / "embeddings.npy" for shard_folder in folders)
    held = first.read_bytes()
    first.write_bytes(second.read_bytes())
    second.write_bytes(held)
    with pytest.raises(ConfigError) as caught:
        ShardPool(
            layout, sharded_kind(installed_registry(), layout.retriever).search, {"chunk_rows": 16, "corpus_rows": 90}
        ).close()
    message = str(caught.value)
    assert "\n" not in message and "shard 0 (passages 0..44" in message, message
    assert "000/embeddings.npy: is not the file split into shard 0" in message and "--overwrite" in message


def test_a_command_line_run_on_shards_of_its_own_local_ray_leaves_no_process_behind(tmp_path):
    """3 shards on the run's own local Ray, which has the machine's CPUs: on a 2-CPU machine (a laptop, CI) two
    actors serve them (was: the third shard waited for ever for a CPU); the answers are the whole index's. The local
    Ray is started in the authentication mode Ray would choose, stated: Ray prints no timestamped warning of its
    choice ("Token authentication is enabled ... Set RAY_AUTH_MODE=disabled to opt out")."""
    from support.helpers import cli, samples

    index = tmp_path / "index"
    build_index(write_dpr_tsv(tmp_path / "psgs.tsv", passages(40)), index, "bm25", {}, progress=False,
                registry=installed_registry())  # fmt: skip
    split_index(index, 3, registry=installed_registry())
    data = tmp_path / "nq.jsonl"
    data.write_text("".join(json.dumps({"id": str(i), "question": q, "golden_answers": ["castle"]}) + "\n"
                            for i, q in enumerate(["king castle", "running river", "zzz", "a prophet"])))  # fmt: skip
    alone = run(tmp_path, "alone", tasks=[TASK], data={TASK: str(data)}, system="vanilla", model="scripted:echo",
                retriever="bm25", retriever_args={"index": str(index)})  # fmt: skip
    done = cli("--tasks", TASK, "--data", f"{TASK}={data}", "--system", "vanilla", "--model", "scripted:echo",
               "--retriever", "bm25", "--retriever-arg", f"index={index}", "--retriever-arg", "shards=3",
               "--output", str(tmp_path / "run"), "--no-progress", timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "still running" not in done.stderr  # the local Ray the shards started is shut down with them
    assert "Token authentication" not in done.stderr and "RAY_AUTH_MODE" not in done.stderr
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["config"]["retriever_args"]["shards"] == 3 and results["results"] == alone["results"]
    predictions = sorted((line["id"], line["prediction"]) for line in samples(tmp_path / "run", TASK))
    assert predictions == sorted((line["id"], line["prediction"]) for line in samples(tmp_path / "alone", TASK))


def test_the_row_built_and_searched_on_a_ray_cluster_scores_as_on_one_machine(ray_cluster, tmp_path):
    """The cluster's way (docs/scale-out.md): the index built by Ray workers into shards (2: more than one), the row
    searching them through shard actors; the numbers those of Anserini's run on the sample, as the one-machine run's are."""
    index, run_dir = tmp_path / "rag24_lucene", tmp_path / "run"
    built = cli_here(
        "index", "build", "--corpus", str(CORPUS), "--retriever", "lucene_bm25", "--out", str(index),
        "--ray", ray_cluster.address, "--workers", "2", "--shards", str(SHARDS), "--no-progress",
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    result = cli_here(
        "reproduce", ROW, "--data", f"trec_rag24={TOPICS}", "--task-arg", f"trec_rag24.qrels={QRELS}",
        "--retriever-arg", f"index={index}", "--retriever-arg", f"shards={SHARDS}",
        "--retriever-arg", f"ray_address={ray_cluster.address}", "--output", str(run_dir), "--no-progress",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    cells = json.loads((run_dir / "results.json").read_text())["reproduction"]["cells"]
    assert {cell["metric"]: cell["ours"] / 100 for cell in cells} == pytest.approx(ANSERINI_ON_SAMPLE, abs=1e-12)
