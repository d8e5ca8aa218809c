"""`ragbench index build` end to end, `--retriever` on the run command, and their clear errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import needs
from ragbench.testing import installed_registry
from support.helpers import cli_here
from support.retrieval_samples import passages, write_dpr_tsv

pytestmark = needs("bm25s")  # not imported while the tests are collected


@pytest.fixture
def corpus(tmp_path):
    return write_dpr_tsv(tmp_path / "psgs_w100.tsv", passages(40))


def test_index_build_bm25_then_search_the_folder_it_wrote(tmp_path, corpus):
    result = cli_here(
        "index",
        "build",
        "--corpus",
        str(corpus),
        "--retriever",
        "bm25",
        "--out",
        str(tmp_path / "idx"),
        "--chunk-size",
        "16",
        "--build-arg",
        "k1=1.2",
        "--no-progress",
    )
    assert result.returncode == 0, result.stderr
    assert f"bm25 index of 40 passages in {tmp_path / 'idx'}" in result.stdout
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["options"]["k1"] == 1.2 and manifest["corpus"]["path"] == str(corpus)

    from ragbench.testing import load_retriever

    hits = load_retriever("bm25", {"index": str(tmp_path / "idx")}, registry=installed_registry()).search(
        ["king queen"], 3
    )[0]
    assert len(hits) == 3 and all(hit.score > 0 for hit in hits)


def test_index_build_dense_with_the_embedded_encoder(tmp_path, corpus):
    pytest.importorskip("sentence_transformers")
    result = cli_here(
        "index",
        "build",
        "--corpus",
        str(corpus),
        "--retriever",
        "dense",
        "--model",
        "embedded",
        "--out",
        str(tmp_path / "idx"),
        "--chunk-size",
        "16",
        "--no-progress",
    )
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["retriever"] == "dense" and manifest["options"]["dim"] == 384 and manifest["doc_count"] == 40


def test_index_build_with_bad_records_finishes_and_exits_incomplete(tmp_path, corpus):
    with open(corpus, "a", encoding="utf-8") as handle:
        handle.write("41\ttwo fields only\n")
    result = cli_here(
        "index",
        "build",
        "--corpus",
        str(corpus),
        "--retriever",
        "bm25",
        "--out",
        str(tmp_path / "idx"),
        "--no-progress",
    )
    assert result.returncode == 1
    assert "bad record skipped: " in result.stderr and "psgs_w100.tsv:42" in result.stderr
    assert json.loads((tmp_path / "idx" / "manifest.json").read_text())["doc_count"] == 40


@pytest.mark.parametrize(
    "args, message",
    [
        (["--corpus", "{tmp}/none.tsv", "--retriever", "bm25"], "corpus {tmp}/none.tsv not found"),
        (["--corpus", "{corpus}", "--retriever", "bm52"], "unknown retriever 'bm52'; did you mean 'bm25'"),
        (["--corpus", "{corpus}", "--retriever", "bm25", "--build-arg", "k1"], "--build-arg 'k1': expected KEY=VALUE"),
        (
            ["--corpus", "{corpus}", "--retriever", "bm25", "--out", "{corpus}", "--overwrite"],
            "--out {corpus} is a file, not a folder; choose a folder (new, or an index's with --overwrite)",
        ),
    ],
)
def test_index_build_config_errors_are_one_line_and_exit_2(tmp_path, corpus, args, message):
    args = [a.format(tmp=tmp_path, corpus=corpus) for a in args]
    result = cli_here("index", "build", "--out", str(tmp_path / "idx"), *args, "--no-progress")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"ragbench: error: {message.format(tmp=tmp_path, corpus=corpus)}")
    assert not (tmp_path / "idx").exists()


def test_run_records_the_retriever_and_fails_fast_on_a_wrong_index(tmp_path, corpus):
    assert (
        cli_here(
            "index",
            "build",
            "--corpus",
            str(corpus),
            "--retriever",
            "bm25",
            "--out",
            str(tmp_path / "idx"),
            "--no-progress",
        ).returncode
        == 0
    )
    wrong = cli_here(
        "--tasks",
        "demo",
        "--model",
        "scripted:echo",
        "--retriever",
        "dense",
        "--retriever-arg",
        f"index={tmp_path / 'idx'}",
        "--output",
        str(tmp_path / "bad"),
        "--no-progress",
    )
    assert wrong.returncode == 2
    assert "holds a bm25 index, not dense; use --retriever bm25" in wrong.stderr
    good = cli_here(
        "--tasks",
        "demo",
        "--model",
        "scripted:echo",
        "--limit",
        "2",
        "--retriever",
        "bm25",
        "--retriever-arg",
        f"index={tmp_path / 'idx'}",
        "--output",
        str(tmp_path / "run"),
        "--no-progress",
    )
    assert good.returncode == 0, good.stderr
    config = json.loads((tmp_path / "run" / "results.json").read_text())["config"]
    assert config["retriever"] == "bm25" and config["retriever_args"] == {"index": str(tmp_path / "idx")}
    assert config["retriever_metadata"]["corpus"]["sha256"]


def test_list_retrievers_and_index_help_import_no_retrieval_library():
    code = (
        "import sys\nfrom ragbench._cli.main import main\n"
        "for args in (['list', 'retrievers'], ['index', 'build', '--help']):\n"
        "    try:\n        main(args)\n    except SystemExit:\n        pass\n"
        "heavy = [m for m in ('torch', 'bm25s', 'sentence_transformers', 'faiss') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "bm25 " in result.stdout and "--corpus" in result.stdout
