"""`ragbench index multihop-rag-corpus`: MultiHop-RAG's articles cut as its simple_retrieval.py cuts them
(pinned to llama-index 0.9.40's own chunks, tests/data/parity/multihop_rag.json), each chunk keeping its
article's title, url, published_at and source through `ragbench index build` into the prompt a run shows."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from test_run_folder_faults import fill

from conftest import TEST_DATA
from ragbench.api import ConfigError
from ragbench.tasks.multihop_rag.chunking import SentenceSplitter
from ragbench.tasks.multihop_rag.corpus import build_corpus, metadata_text
from ragbench.testing import build_index, installed_registry
from support.helpers import cli_here, run, samples, tmpfs

CHUNKING = json.loads((TEST_DATA / "parity" / "multihop_rag.json").read_text(encoding="utf-8"))["chunking"]
DATA = TEST_DATA / "multihop_rag"


@pytest.mark.parametrize("upstream", CHUNKING["settings"], ids=lambda s: f"{s['chunk_size']}_{s['chunk_overlap']}")
def test_chunks_equal_llama_index_sentence_splitter(upstream):
    splitter = SentenceSplitter(upstream["chunk_size"], upstream["chunk_overlap"])
    ours = [
        [article["title"], text]
        for article in CHUNKING["articles"]
        for text in splitter.split(article["body"], metadata_text(article))
    ]
    assert ours == upstream["chunks"]


def test_the_chunks_file_holds_upstreams_chunks_with_their_articles_metadata(tmp_path):
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(CHUNKING["articles"]), encoding="utf-8")
    stats = build_corpus(corpus, tmp_path / "chunks.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "chunks.jsonl").read_text(encoding="utf-8").splitlines()]
    default = next(s for s in CHUNKING["settings"] if (s["chunk_size"], s["chunk_overlap"]) == (256, 200))
    assert (stats.articles, stats.chunks) == (len(CHUNKING["articles"]), len(default["chunks"]))
    assert [[line["title"], line["text"]] for line in lines] == default["chunks"]
    first = CHUNKING["articles"][0]
    assert lines[0] == {
        "id": "0#0",
        "title": first["title"],
        "url": first["url"],
        "text": default["chunks"][0][1],
        "metadata": {key: first[key] for key in ("published_at", "source", "author", "category")},
    }
    assert default["first_llm_content"] == f"{metadata_text(first)}\n\n{lines[0]['text']}"


def chunked_corpus_index(tmp_path: Path) -> Path:
    """The sample corpus chunked by `ragbench index multihop-rag-corpus` into tmp_path/chunks.jsonl, and a BM25
    index of the chunks at tmp_path/index."""
    assert (
        cli_here(
            "index",
            "multihop-rag-corpus",
            "--corpus",
            str(DATA / "corpus.json"),
            "--out",
            str(tmp_path / "chunks.jsonl"),
        ).returncode
        == 0
    )
    build_index(tmp_path / "chunks.jsonl", tmp_path / "index", "bm25", progress=False, registry=installed_registry())
    return tmp_path / "index"


def test_a_run_shows_each_chunk_with_its_title_date_and_source_as_qa_llama_prompts(tmp_path):
    index = chunked_corpus_index(tmp_path)
    results = run(
        tmp_path,
        tasks=["multihop_rag"],
        data={"multihop_rag": str(DATA / "MultiHopRAG.json")},
        system="vanilla",
        model="scripted:echo",
        system_args={"top_n": 2},
        retriever="bm25",
        retriever_args={"index": str(index)},
    )
    first = samples(tmp_path / "run", "multihop_rag")[0]
    doc = first["prediction"]["docs"][0]
    assert (doc["id"], doc["url"], doc["metadata"]["published_at"], doc["metadata"]["source"]) == (
        "0#0",
        "https://varncourier.example/harbor-lights-record",
        "2023-10-02T08:15:00+00:00",
        "The Varn Courier",
    )
    prompt = next(step for step in first["trace"] if step["kind"] == "llm")["request"]["prompt"]
    article = json.loads((DATA / "corpus.json").read_text(encoding="utf-8"))
    assert prompt.endswith(
        f"Question:{first['question']}\n\nContext:\n\n"
        f"title: {article[0]['title']}\npublished_at: {article[0]['published_at']}\n"
        f"source: {article[0]['source']}\n\n{article[0]['body']}--------------title: {article[1]['title']}"
        f"\npublished_at: {article[1]['published_at']}\nsource: {article[1]['source']}\n\n"
        f"{article[1]['body']}"
    )
    assert prompt.startswith("Below is a question followed by some context from different sources.")
    by_type = results["details"]["multihop_rag"]["hits_at_10"]["slices"]["question_type"]
    assert sorted(by_type) == ["comparison_query", "inference_query", "null_query", "temporal_query"]
    assert by_type["null_query"] == {"value": None, "ci95": None, "n": 0}  # null queries: not scored
    assert by_type["inference_query"]["value"] == 1.0


def test_a_record_that_is_not_an_article_is_counted_and_the_command_says_so(tmp_path):
    corpus = tmp_path / "corpus.json"
    articles = json.loads((DATA / "corpus.json").read_text(encoding="utf-8"))
    corpus.write_text(
        json.dumps([articles[0], {"title": "No body", "source": "s", "published_at": "p"}, "text"]), encoding="utf-8"
    )
    done = cli_here("index", "multihop-rag-corpus", "--corpus", str(corpus), "--out", str(tmp_path / "chunks.jsonl"))
    assert done.returncode == 1, done.stderr  # incomplete
    assert f"{corpus} [1] field 'body': missing field" in done.stderr
    assert f"{corpus} [2]: expected an article object, got str" in done.stderr
    assert "2 bad record(s) skipped" in done.stderr
    assert len((tmp_path / "chunks.jsonl").read_text(encoding="utf-8").splitlines()) == 1


def test_an_article_whose_metadata_leaves_no_room_is_counted_and_the_others_cut(tmp_path):
    corpus = tmp_path / "corpus.json"
    articles = json.loads((DATA / "corpus.json").read_text(encoding="utf-8"))
    corpus.write_text(json.dumps([{**articles[0], "title": "word " * 300}, articles[1]]), encoding="utf-8")
    stats = build_corpus(corpus, tmp_path / "chunks.jsonl")
    assert [str(e) for e in stats.errors] == [
        f"{corpus} [0] field 'title': chunking: metadata of 330 tokens leaves no "
        "room in chunks of 256; raise --chunk-size"
    ]
    chunks = [json.loads(line) for line in (tmp_path / "chunks.jsonl").read_text(encoding="utf-8").splitlines()]
    assert stats.articles == 1 and chunks and {chunk["id"].split("#")[0] for chunk in chunks} == {"1"}


def test_a_file_that_is_not_a_json_list_is_one_line(tmp_path):
    corpus = tmp_path / "corpus.json"
    corpus.write_text('{"title": "one article"}', encoding="utf-8")
    with pytest.raises(ConfigError, match="expected a JSON list of articles, got dict"):
        build_corpus(corpus, tmp_path / "chunks.jsonl")
    corpus.write_text('[{"title": ', encoding="utf-8")
    done = cli_here("index", "multihop-rag-corpus", "--corpus", str(corpus), "--out", str(tmp_path / "chunks.jsonl"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not a JSON document" in done.stderr, done.stderr
    assert not (tmp_path / "chunks.jsonl").exists()


def test_an_existing_out_file_is_kept_unless_overwrite(tmp_path):
    out = tmp_path / "chunks.jsonl"
    out.write_text("mine\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="exists; pass --overwrite"):
        build_corpus(DATA / "corpus.json", out)
    assert out.read_text(encoding="utf-8") == "mine\n"
    assert build_corpus(DATA / "corpus.json", out, overwrite=True).chunks == 3


def test_chunks_written_on_a_full_disk_end_in_one_line_and_leave_nothing(tmp_path, monkeypatch):
    article = json.loads((DATA / "corpus.json").read_text(encoding="utf-8"))[0]
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{**article, "body": article["body"] * 60}] * 20), encoding="utf-8")
    with tmpfs(tmp_path / "disk", size="64k") as disk:
        if disk is not None:
            fill(disk, leave=4_000)
            full = cli_here(
                "index", "multihop-rag-corpus", "--corpus", str(corpus), "--out", str(disk / "chunks.jsonl")
            )
            assert sorted(p.name for p in disk.iterdir()) == ["filler"]
            assert full.returncode == 1 and "Traceback" not in full.stderr, full.stderr
            assert full.stderr.strip().splitlines() == [full.stderr.strip().splitlines()[-1]]
            assert full.stderr.startswith("ragbench: error: No space left on device: "), full.stderr
            assert str(disk / "chunks.jsonl") in full.stderr
            return

    # no tmpfs here (CI): the disk fills as the file is flushed
    def enospc(descriptor):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.delenv("RAGBENCH_FSYNC")  # the suite's setting: flushed, as a user's build is
    monkeypatch.setattr(os, "fsync", enospc)  # the os module ragbench's file writing calls, as it calls it
    with pytest.raises(OSError, match="No space left on device") as full_disk:
        build_corpus(corpus, tmp_path / "chunks.jsonl")
    assert full_disk.value.filename == str(tmp_path / "chunks.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.json"]


def test_a_query_whose_answer_is_null_scores_its_retrieval_and_not_its_qa(tmp_path):
    """qa_evaluate.py leaves a query without a gold answer out; retrieval_evaluate.py still scores its
    evidence: not a bad record that loses both."""
    queries = json.loads((DATA / "MultiHopRAG.json").read_text(encoding="utf-8"))
    first = next(query for query in queries if query["question_type"] != "null_query")
    data = tmp_path / "MultiHopRAG.json"
    data.write_text(json.dumps([{**first, "answer": None}]), encoding="utf-8")
    index = chunked_corpus_index(tmp_path)
    results = run(
        tmp_path,
        tasks=["multihop_rag"],
        data={"multihop_rag": str(data)},
        system="vanilla",
        model="scripted:echo",
        retriever="bm25",
        retriever_args={"index": str(index)},
    )
    assert results["counts"]["multihop_rag"]["bad_records"] == 0
    details = results["details"]["multihop_rag"]
    assert details["accuracy"]["value"] is None and details["hits_at_10"]["n"] == 1
