"""A corpus given as a folder of Hugging Face `datasets`' `save_to_disk` (BrowseComp-Plus's corpus, kept offline)
is a corpus everywhere a corpus file is: its rows read as the same rows of a JSONL file are (any unicode, the id
as `id`, `_id` or `docid`, a row without one a RecordError), looked up by id as a full read answers, indexed by
BM25 as the JSONL is, an edited folder given an index of its own; a folder that is no dataset is one line."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import needs
from ragbench.api import ConfigError, Document, RecordError
from ragbench.api.retrieval import CorpusLookup, read_corpus
from ragbench.testing import build_index, installed_registry, load_retriever
from support.helpers import cli_here

pytestmark = needs("datasets")  # not imported while the tests are collected

ID_KEYS = st.sampled_from(["id", "_id", "docid", None])  # None: a row without an id
IDS = st.one_of(st.sampled_from(["d1", "d2", "é3", "文4", "5", "😀"]), st.text(min_size=1, max_size=6))
TEXTS = st.text(max_size=30)  # any characters: newlines, quotes, U+2028, surrogates left out by json
ROWS = st.lists(st.tuples(ID_KEYS, IDS, TEXTS, st.one_of(st.none(), TEXTS)), min_size=1, max_size=10)


def records(rows: list[tuple[str | None, str, str, str | None]]) -> list[dict[str, Any]]:
    """The rows as JSONL records: the id under its key (none where the key is None), a title where one is given."""
    out = []
    for key, doc_id, text, title in rows:
        record: dict[str, Any] = {"text": text, "url": f"https://example.org/{len(out)}"}
        if key is not None:
            record[key] = doc_id
        if title is not None:
            record["title"] = title
        out.append(record)
    return out


def save(folder: Path, rows: list[dict[str, Any]]) -> Path:
    """`rows` saved as a dataset: a table, each column in every row (null where a row has no such key)."""
    import datasets

    columns = list(dict.fromkeys(key for row in rows for key in row))
    datasets.disable_progress_bars()
    datasets.Dataset.from_list([{key: row.get(key) for key in columns} for row in rows]).save_to_disk(str(folder))
    return folder


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def read_as_compared(path: Path) -> list[Document | tuple[str | None, str]]:
    """The passages read, a bad row as its field and problem (a file names it by line, a folder by row)."""
    return [
        item if isinstance(item, Document) else (item.field, str(item).rsplit(": ", 1)[-1])
        for item in read_corpus(path)
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ROWS)
def test_a_saved_dataset_reads_the_documents_of_the_same_rows_in_jsonl(rows):
    with tempfile.TemporaryDirectory() as tmp:
        rows_written = records(rows)
        folder = save(Path(tmp) / "corpus", rows_written)
        jsonl = write_jsonl(Path(tmp) / "corpus.jsonl", rows_written)
        assert read_as_compared(folder) == read_as_compared(jsonl)
        missing = [i for i, (key, *_) in enumerate(rows) if key is None]
        errors = [str(item) for item in read_corpus(folder) if isinstance(item, RecordError)]
        assert errors == [f"{folder} row {i} field 'id': missing passage id" for i in missing]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ROWS, st.lists(IDS, max_size=4))
def test_a_saved_dataset_is_looked_up_by_id_as_a_full_read_answers(rows, others):
    with tempfile.TemporaryDirectory() as tmp:
        folder = save(Path(tmp) / "corpus", records(rows))
        full = {doc.id: doc for doc in read_corpus(folder) if isinstance(doc, Document)}  # the last with an id wins
        lookup = CorpusLookup(folder)
        assert len(lookup) == sum(key is not None for key, *_ in rows)
        for docid in [doc_id for _, doc_id, *_ in rows] + others:
            assert lookup.get(docid) == full.get(docid)


def passages_rows(n: int) -> list[dict[str, Any]]:
    words = ["alpha", "beta", "gamma", "delta", "épsilon", "zeta", "eta", "theta"]
    return [
        {"docid": f"doc{i}", "text": " ".join(words[(i * j) % len(words)] for j in range(1, 6 + i % 4)), "url": ""}
        for i in range(n)
    ]


def build(corpus: Path, out: Path) -> Path:
    build_index(corpus, out, "bm25", chunk_size=7, progress=False, registry=installed_registry())
    return out


def bm25(index: Path) -> Any:
    """The retriever of `--retriever bm25 --retriever-arg index=INDEX`."""
    return load_retriever("bm25", {"index": str(index)}, registry=installed_registry())


def test_a_bm25_index_of_a_saved_dataset_searches_as_the_index_of_the_same_jsonl(tmp_path):
    pytest.importorskip("bm25s")
    rows = passages_rows(30)
    folder_index = build(save(tmp_path / "corpus", rows), tmp_path / "from_folder")
    jsonl_index = build(write_jsonl(tmp_path / "corpus.jsonl", rows), tmp_path / "from_jsonl")
    queries = ["alpha beta", "épsilon", "theta zeta gamma", "nothing here"]
    from_folder, from_jsonl = (bm25(index) for index in (folder_index, jsonl_index))
    try:
        assert from_folder.search(queries, 5) == from_jsonl.search(queries, 5)
        assert from_folder.manifest.doc_count == 30
        corpus = from_folder.manifest.corpus
        arrow = sorted((tmp_path / "corpus").glob("*.arrow"))
        assert corpus["format"] == "saved_dataset" and corpus["bytes"] == sum(f.stat().st_size for f in arrow)
    finally:
        from_folder.close()
        from_jsonl.close()


def test_an_edited_saved_dataset_is_not_the_corpus_an_index_was_built_from(tmp_path):
    """The identity an index records (a resume compares it; the cache names its index by it) is the content of the
    data files: an edited folder is another corpus, a copy of the folder elsewhere the same one."""
    pytest.importorskip("bm25s")
    rows = passages_rows(5)
    edited_rows = [*rows[:4], {**rows[4], "text": "changed"}]
    identity = {
        name: build(save(tmp_path / name, given), tmp_path / f"{name}_index")
        for name, given in (("corpus", rows), ("edited", edited_rows), ("copy", rows))
    }
    corpus = {name: json.loads((index / "manifest.json").read_text())["corpus"] for name, index in identity.items()}
    assert corpus["edited"]["sha256"] != corpus["corpus"]["sha256"]
    assert corpus["copy"]["sha256"] == corpus["corpus"]["sha256"] and len(corpus["copy"]["sha256"]) == 64


def test_resume_refuses_a_run_whose_index_was_rebuilt_from_an_edited_saved_dataset(tmp_path):
    pytest.importorskip("bm25s")
    rows = passages_rows(30)
    index, run = build(save(tmp_path / "corpus", rows), tmp_path / "index"), tmp_path / "run"
    args = ("--tasks", "demo", "--model", "scripted:echo", "--limit", "3", "--system", "vanilla")
    args += ("--retriever", "bm25", "--retriever-arg", f"index={index}", "--output", str(run), "--no-progress")
    assert cli_here(*args).returncode == 0
    samples = run / "samples" / "demo.jsonl"
    samples.write_text(samples.read_text().splitlines()[0] + "\n")  # the run stopped after one example
    save(tmp_path / "edited", [*rows[:29], {**rows[29], "text": "an edited passage"}])
    build_index(tmp_path / "edited", index, "bm25", progress=False, overwrite=True, registry=installed_registry())
    refused = cli_here(*args, "--resume")
    assert refused.returncode == 2
    [line] = refused.stderr.strip().splitlines()
    assert "what the retriever searches (its index or recording) changed since the run started" in line
    assert "sha256: " in line


def test_a_folder_that_is_no_saved_dataset_is_one_line(tmp_path):
    folder = tmp_path / "passages"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text('{"id": "a", "text": "x"}\n')
    result = cli_here("index", "build", "--corpus", str(folder), "--retriever", "bm25", "--out", str(tmp_path / "i"))
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line == (
        f"ragbench: error: corpus {folder} is a folder but no dataset saved by Hugging Face datasets (no state.json "
        "or dataset_dict.json) and no MS MARCO V2.1 segmented shards (msmarco_v2.1_doc_segmented_*.json.gz, or unpacked .json / .jsonl): save "
        "it with Dataset.save_to_disk(FOLDER), or name a .tsv or .jsonl file"
    )
    assert not (tmp_path / "i").exists()


def test_a_saved_dataset_without_datasets_installed_names_the_extra(tmp_path, monkeypatch):
    folder = save(tmp_path / "corpus", passages_rows(2))
    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets raises ImportError
    with pytest.raises(ConfigError, match=r"^corpus .*corpus is a dataset folder.*pip install 'ragbench\[datasets\]'$"):
        list(read_corpus(folder))


def test_a_saved_dataset_dict_of_several_splits_asks_for_one(tmp_path):
    import datasets

    rows = passages_rows(2)
    folder = tmp_path / "dict"
    dataset = datasets.Dataset.from_list(rows)
    datasets.DatasetDict({"train": dataset, "test": dataset}).save_to_disk(str(folder))
    with pytest.raises(ConfigError, match=r"holds the splits train, test; save the corpus's split alone"):
        list(read_corpus(folder))
    single = tmp_path / "single"
    datasets.DatasetDict({"train": dataset}).save_to_disk(str(single))
    assert [doc.id for doc in read_corpus(single)] == ["doc0", "doc1"]


def test_a_saved_dataset_rewritten_while_it_is_indexed_leaves_no_index(tmp_path, monkeypatch):
    pytest.importorskip("bm25s")
    folder = save(tmp_path / "corpus", passages_rows(30))
    [arrow] = folder.glob("*.arrow")
    builder = installed_registry().load("retrievers", "bm25").builder  # what `index build --kind bm25` builds with
    original = builder.add

    def add_while_a_copy_rewrites(self: Any, texts: list[str]) -> None:
        with open(arrow, "ab") as handle:  # a copy of a larger version still arriving
            handle.write(b"\0" * 8)
        original(self, texts)

    monkeypatch.setattr(builder, "add", add_while_a_copy_rewrites)
    with pytest.raises(ConfigError, match=r"changed while it was indexed .*build again once the folder is complete"):
        build_index(folder, tmp_path / "index", "bm25", chunk_size=8, progress=False, registry=installed_registry())
    assert not (tmp_path / "index").exists()
