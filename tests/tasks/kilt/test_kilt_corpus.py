"""`ragbench index kilt-corpus`: KILT's knowledge source cut into passages as KILT's
create_kilt_data_paragraphs.py cuts it (pinned to its run_thread's output, tests/data/parity/kilt.json),
each passage carrying its page's wikipedia_id through `ragbench index build` to a run's retrieval."""

from __future__ import annotations

import json

import pytest
from test_run_folder_faults import fill

from conftest import TEST_DATA
from ragbench.api import ConfigError
from ragbench.tasks.kilt.knowledge_source import build_corpus, page_passages, spacy_pipeline
from ragbench.testing import build_index, installed_registry
from support.helpers import cli_here, run, samples, tmpfs

CHUNKING = json.loads((TEST_DATA / "parity" / "kilt.json").read_text(encoding="utf-8"))["chunking"]
PAGES = CHUNKING["pages"]


@pytest.mark.parametrize("upstream", CHUNKING["runs"], ids=lambda r: f"chunk_size_{r['chunk_size']}")
def test_passages_equal_create_kilt_data_paragraphs(upstream):
    nlp = spacy_pipeline("sentencizer")
    ours = [
        {"wikipedia_id": page["wikipedia_id"], "title": page["wikipedia_title"], "section": section, "text": text}
        for page in PAGES
        for section, text in page_passages(page["text"], nlp, upstream["chunk_size"])
    ]
    assert ours == upstream["chunks"]


def knowledge_source(tmp_path, bad_line: bool = False):
    path = tmp_path / "kilt_knowledgesource.json"
    lines = [json.dumps(page) for page in PAGES] + (['{"_id": "5", "text": ["No id\\n"]}'] if bad_line else [])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_corpus_serves_kilt_nq_passages_carrying_their_wikipedia_id(tmp_path):
    corpus = tmp_path / "kilt_passages.jsonl"
    stats = build_corpus(knowledge_source(tmp_path), corpus, "sentencizer")
    lines = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    assert (stats.pages, stats.passages) == (len(PAGES), len(CHUNKING["runs"][0]["chunks"]))
    assert lines[0] == {
        "id": "90001#0",
        "wikipedia_id": "90001",
        "title": "Olm",
        "text": CHUNKING["runs"][0]["chunks"][0]["text"],
    }
    build_index(corpus, tmp_path / "index", "bm25", progress=False, registry=installed_registry())
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps(
            [
                {"pattern": "fishing town of olm", "response": "Ansgar Pell"},
                {"pattern": "capital of varn", "response": "Evermouth"},
            ]
        ),
        encoding="utf-8",
    )
    results = run(
        tmp_path,
        tasks=["kilt_nq"],
        data={"kilt_nq": str(TEST_DATA / "kilt" / "nq-dev-kilt.jsonl")},
        system="vanilla",
        model=f"scripted:{rules}",
        system_args={"top_n": 1},
        retriever="bm25",
        retriever_args={"index": str(tmp_path / "index")},
    )
    shown = [sample["prediction"]["docs"][0] for sample in samples(tmp_path / "run", "kilt_nq")]
    assert [(doc["id"], doc["metadata"]["wikipedia_id"]) for doc in shown] == [
        ("90001#0", "90001"),
        ("90002#0", "90002"),
    ]
    assert results["results"]["kilt_nq"]["rprec"] == 1.0


def test_a_line_that_is_not_a_page_is_counted_and_the_command_says_so(tmp_path):
    done = cli_here(
        "index",
        "kilt-corpus",
        "--knowledge-source",
        str(knowledge_source(tmp_path, bad_line=True)),
        "--out",
        str(tmp_path / "passages.jsonl"),
        "--spacy-model",
        "sentencizer",
    )
    assert done.returncode == 1, done.stderr  # incomplete
    assert f"{len(PAGES)} pages, {len(CHUNKING['runs'][0]['chunks'])} passages" in done.stdout
    assert done.stderr.splitlines()[0] == (
        f"ragbench: bad record skipped: {tmp_path}/kilt_knowledgesource.json:"
        f"{len(PAGES) + 1} field 'wikipedia_id': missing field"
    )


def test_a_spacy_model_that_is_not_installed_is_one_line_with_the_fix(tmp_path):
    done = cli_here(
        "index",
        "kilt-corpus",
        "--knowledge-source",
        str(knowledge_source(tmp_path)),
        "--out",
        str(tmp_path / "passages.jsonl"),
        "--spacy-model",
        "xx_no_such_pipeline",
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[-1].startswith("ragbench: error: --spacy-model xx_no_such_pipeline: not installed")
    assert "python -m spacy download xx_no_such_pipeline" in done.stderr and not (tmp_path / "passages.jsonl").exists()


def test_an_existing_out_is_kept_without_overwrite(tmp_path):
    (tmp_path / "passages.jsonl").write_text("mine\n")
    with pytest.raises(ConfigError, match="exists; pass --overwrite"):
        build_corpus(knowledge_source(tmp_path), tmp_path / "passages.jsonl", "sentencizer")
    assert (tmp_path / "passages.jsonl").read_text() == "mine\n"


def test_a_file_beside_out_is_never_written_nor_removed(tmp_path):
    """The corpus is written to a temporary file of ragbench's own naming: a user's file next to --out whose name
    a writer might pick (passages.jsonl.partial) is left as it was."""
    mine = tmp_path / "passages.jsonl.partial"
    mine.write_text("mine\n")
    build_corpus(knowledge_source(tmp_path), tmp_path / "passages.jsonl", "sentencizer")
    assert mine.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [mine.name, "passages.jsonl", "kilt_knowledgesource.json"]
    )


def test_a_corpus_written_on_a_full_disk_ends_in_one_line_and_leaves_nothing(tmp_path):
    source = tmp_path / "kilt_knowledgesource.json"
    page = {**PAGES[0], "text": ["Olm\n", *["Olm is a fishing town on the north coast of Varn. " * 40 + "\n"] * 40]}
    source.write_text(json.dumps(page) + "\n", encoding="utf-8")
    with tmpfs(tmp_path / "disk", size="64k") as disk:
        if disk is None:
            pytest.skip("mounting a tmpfs is not allowed here")
        fill(disk, leave=4_000)
        full = cli_here(
            "index",
            "kilt-corpus",
            "--knowledge-source",
            str(source),
            "--out",
            str(disk / "passages.jsonl"),
            "--spacy-model",
            "sentencizer",
        )
        assert sorted(p.name for p in disk.iterdir()) == ["filler"]
    assert full.returncode == 1 and "Traceback" not in full.stderr, full.stderr
    assert full.stderr.strip().splitlines()[-1].startswith("ragbench: error: No space left on device: "), full.stderr


def test_the_corpus_commands_show_their_source_out_own_options_then_overwrite():
    """The benchmarks' corpus commands are one shape (tasks/shared/corpus_command.py), their options in this order."""
    from ragbench.tasks import index_commands

    commands = index_commands().commands
    assert {name: [param.opts[0] for param in command.params] for name, command in commands.items()} == {
        "kilt-corpus": ["--knowledge-source", "--out", "--chunk-size", "--spacy-model", "--overwrite"],
        "multihop-rag-corpus": ["--corpus", "--out", "--chunk-size", "--chunk-overlap", "--overwrite"],
        "omnieval-corpus": ["--docs", "--out", "--split", "--path-as", "--overwrite"],
    }
