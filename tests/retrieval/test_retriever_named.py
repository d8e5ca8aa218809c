"""The retriever a run searched, with its index and shards, is named wherever the run is: the console's summary,
report.md's header and `ragbench compare`'s line of what each run is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_trec_rag import SHARD_00, SHARD_01, write_corpus

from ragbench.testing import build_index, installed_registry
from support.helpers import cli_here


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    corpus = write_corpus(tmp_path_factory.mktemp("corpus"), SHARD_00, SHARD_01)
    folder = tmp_path_factory.mktemp("index") / "bm25"
    build_index(corpus, folder, "bm25", progress=False, registry=installed_registry())
    return folder


def demo_run(out: Path, *retrieval: str):
    ran = cli_here(
        "--tasks", "demo", "--limit", "2", "--model", "scripted:echo", "--bootstrap-iters", "0", "--no-progress",
        "--output", str(out), *retrieval,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    return ran


def test_the_summary_and_report_name_the_retriever_and_its_index(tmp_path, index):
    ran = demo_run(tmp_path / "searched", "--retriever", "bm25", "--retriever-arg", f"index={index}")
    named = "retriever bm25 (index bm25)"
    assert ran.stdout.splitlines()[0] == f"run: system vanilla, engine scripted, model echo, {named}"
    header = (tmp_path / "searched" / "report.md").read_text().splitlines()[2]
    assert header.startswith(f"model `scripted:echo`, {named}, seed 0")
    provided = demo_run(tmp_path / "provided")
    assert provided.stdout.splitlines()[0] == "run: system vanilla, engine scripted, model echo, retriever provided"


def test_compare_names_each_runs_retriever_and_its_shards(tmp_path, index):
    demo_run(tmp_path / "one", "--retriever", "bm25", "--retriever-arg", f"index={index}")
    demo_run(tmp_path / "sharded", "--retriever", "bm25", "--retriever-arg", f"index={index}")
    results = tmp_path / "sharded" / "results.json"  # as a run over 2 shards records its retriever
    written = json.loads(results.read_text())
    written["config"]["retriever_metadata"].update({"shards": 2, "shard_passages": [[0, 4], [4, 7]]})
    results.write_text(json.dumps(written))
    compared = cli_here("compare", str(tmp_path / "one"), str(tmp_path / "sharded"))
    assert compared.returncode == 0, compared.stderr
    lines = compared.stdout.splitlines()
    assert "A searched with retriever bm25 (index bm25); B with retriever bm25 (index bm25, 2 shards)" in lines
    full = cli_here("compare", str(tmp_path / "one"), str(tmp_path / "sharded"), "--full").stdout.splitlines()
    assert "A searched with retriever bm25 (index bm25); B with retriever bm25 (index bm25, 2 shards)" in full
    alike = cli_here("compare", str(tmp_path / "one"), str(tmp_path / "one")).stdout.splitlines()
    assert "both searched with retriever bm25 (index bm25)" in alike
