"""CRAG tasks: the release file formats, splits, bad records, and the baselines' prompts."""

from __future__ import annotations

import bz2
import io
import json
import tarfile

import pytest

from conftest import shared_reference, write_jsonl
from ragbench.api import ConfigError, RecordError
from ragbench.api.trace import trace_prompts
from ragbench.tasks.crag.loader import read_task3_archive, task3_parts
from ragbench.tasks.crag.prompts import prompts
from ragbench.tasks.crag.task import CragTask1, CragTask3
from support.crag_helpers import crag_record, tokenizer_dir
from support.helpers import run, samples

EMBEDDER = "support.crag_helpers:KeywordEmbedder"


def task1(path, **args):
    task = CragTask1(path, tokenizer=tokenizer_dir(), **args)
    task.prepare()
    return task


def test_the_pre_v3_example_file_loads_with_its_string_alternative_answers():
    examples = list(task1(shared_reference() / "crag" / "dev_data_sample.jsonl").examples())
    assert len(examples) == 10 and all(not isinstance(e, RecordError) for e in examples)
    assert all(e.gold["alt_ans"] == [] for e in examples)
    assert "nan" in [e.gold["answer"] for e in examples]
    first = examples[0]
    assert first.extras["query_time"] and first.meta["domain"] and len(first.docs) == 2
    assert first.docs[0].metadata["page_result"].startswith("<")


def test_split_selects_validation_or_public_test(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [crag_record(i) for i in range(6)])
    assert [e.id for e in task1(data).examples()] == ["id-1", "id-3", "id-5"]  # public test is the default
    assert [e.id for e in task1(data, split="validation").examples()] == ["id-0", "id-2", "id-4"]
    assert len(list(task1(data, split="all").examples())) == 6


def test_v5_bz2_is_streamed_with_popularity_as_a_slice(tmp_path):
    path = tmp_path / "crag_task_1_and_2_dev_v5.jsonl.bz2"
    records = [crag_record(1, popularity="head"), crag_record(3, popularity=""), crag_record(5, alt_ans=["a", "b"])]
    with bz2.open(path, "wt") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in records))
    examples = list(task1(path).examples())
    assert [e.meta.get("popularity") for e in examples] == ["head", "none", None]
    assert examples[2].gold == {"answer": "answer 5", "alt_ans": ["a", "b"]}


def test_bad_records_are_reported_and_the_rest_load(tmp_path):
    no_pages = {k: v for k, v in crag_record(3).items() if k != "search_results"}
    data = write_jsonl(tmp_path / "d.jsonl", [crag_record(1), "{not json", no_pages, crag_record(5, query=7)])
    items = list(task1(data, split="all").examples())
    assert [type(i).__name__ for i in items] == ["Example", "RecordError", "RecordError", "RecordError"]
    assert items[2].field == "search_results" and items[3].field == "query"


def make_task3_parts(tmp_path, records, parts=3, first=0):
    members = {
        "crag_task_3_dev_v5/crag_task_3_dev_v5_0.jsonl": records[:2],
        "crag_task_3_dev_v5/README.txt": None,
        "crag_task_3_dev_v5/crag_task_3_dev_v5_1.jsonl": records[2:],
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:bz2") as archive:
        for name, content in members.items():
            data = b"readme" if content is None else "".join(json.dumps(r) + "\n" for r in content).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    blob = buffer.getvalue()
    size = len(blob) // parts + 1
    paths = []
    for i in range(parts):
        path = tmp_path / f"crag_task_3_dev_v5.tar.bz2.part{first + i}"
        path.write_bytes(blob[i * size : (i + 1) * size])
        paths.append(path)
    return paths


def test_task3_reads_every_jsonl_member_of_the_multipart_archive_in_order(tmp_path):
    records = [crag_record(i, split=1) for i in range(5)]
    paths = make_task3_parts(tmp_path, records)
    for given in (paths[1], tmp_path):  # any part, or their folder
        task = CragTask3(given, tokenizer=tokenizer_dir(), kg=False)
        task.prepare()
        assert [e.id for e in task.examples()] == [f"id-{i}" for i in range(5)]
        assert [e.index for e in task.examples()] == list(range(5))


def test_task3_streams_so_the_first_examples_need_only_the_first_bytes(tmp_path):
    big_page = {"page_result": " ".join(str(i) for i in range(150_000))}  # ~1 MB: several 900 kB bz2 blocks
    records = [crag_record(i, split=1, search_results=[big_page]) for i in range(5)]
    paths = make_task3_parts(tmp_path, records, parts=4, first=1)
    paths[-1].write_bytes(b"corrupt")  # v4 numbering starts at part1; the last part is broken
    task = CragTask3(paths[0], tokenizer=tokenizer_dir(), kg=False)
    task.prepare()
    stream = task.examples()
    assert next(stream).id == "id-0"
    items = list(stream)
    assert isinstance(items[-1], RecordError) and "cannot read past" in str(items[-1])


def test_an_archive_cut_inside_a_record_is_one_bad_record(tmp_path):
    big_page = {"page_result": " ".join(str(i) for i in range(150_000))}  # ~1 MB: several bz2 blocks
    paths = make_task3_parts(tmp_path, [crag_record(i, split=1, search_results=[big_page]) for i in range(5)], parts=1)
    paths[0].write_bytes(paths[0].read_bytes()[: len(paths[0].read_bytes()) * 3 // 4])  # inside the last member
    items = [item for _, item in read_task3_archive(paths[0], threads=0)]
    errors = [item for item in items if isinstance(item, RecordError)]
    assert len(errors) == 1 and "cannot read past this line" in str(errors[0])  # not a second one for the tar
    assert len(items) - 1 >= 2  # the records before the cut are read


def test_task3_parts_must_be_consecutive(tmp_path):
    paths = make_task3_parts(tmp_path, [crag_record(0)], parts=3)
    paths[1].unlink()
    with pytest.raises(ConfigError, match="not consecutive"):
        task3_parts(paths[0])


def test_missing_tokenizer_and_kg_fail_before_the_run(tmp_path, monkeypatch):
    monkeypatch.delenv("CRAG_LLAMA2_TOKENIZER", raising=False)
    monkeypatch.delenv("CRAG_MOCK_API_URL", raising=False)
    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(tmp_path))
    data = write_jsonl(tmp_path / "d.jsonl", [crag_record(1)])
    with pytest.raises(ConfigError, match="Llama-2"):
        CragTask1(data).prepare()
    with pytest.raises(ConfigError, match="kg_url"):
        CragTask3(data, tokenizer=tokenizer_dir()).prepare()
    with pytest.raises(ConfigError, match="no KG API"):
        CragTask1(data, kg=True)


def run_crag(tmp_path, records, system="vanilla", name="run", **task_args):
    data = write_jsonl(tmp_path / f"{name}.jsonl", records)
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"response": "I don't know"}]))
    run(
        tmp_path,
        name,
        tasks=["crag_t1"],
        system=system,
        model=f"scripted:{rules}",
        data={"crag_t1": str(data)},
        judges=[f"scripted:{rules}"],
        task_args={"tokenizer": tokenizer_dir(), "embedder": EMBEDDER, "page_executor": "thread", **task_args},
    )
    return samples(tmp_path / name, "crag_t1")


def test_closed_book_sends_the_vanilla_baseline_chat(tmp_path):
    sample = run_crag(tmp_path, [crag_record(1)], system="closed_book")[0]
    base = prompts()["baselines"]
    assert trace_prompts(sample["trace"])[0] == [
        {"role": "system", "content": base["vanilla_system"]},
        {"role": "user", "content": "Current Time: 03/01/2024, 10:00:00 PT\nQuestion: question 1?\n"},
    ]
    assert sample["trace"][0]["request"]["sampling"] | {} == {
        **sample["trace"][0]["request"]["sampling"],
        "max_tokens": 50,
        "temperature": 0.1,
        "top_p": 0.9,
    }


def test_vanilla_sends_the_rag_baseline_references_cut_at_4000_characters(tmp_path):
    sentences = " ".join(f"Fact number {i} about question one is {'x' * 300}." for i in range(40))
    page = {
        "page_name": "P",
        "page_url": "u",
        "page_snippet": "",
        "page_last_modified": "",
        "page_result": f"<html><body><p>{sentences}</p></body></html>",
    }
    empty = dict(page, page_result="")
    sample = run_crag(tmp_path, [crag_record(1, search_results=[page, empty, page])])[0]
    user = trace_prompts(sample["trace"])[0][1]["content"]
    references, tail = user.split("\n------\n\n")
    assert references.startswith("# References \n- ") and len(references) == 4000
    assert tail == (
        "Using only the references listed above, answer the following question: \n"
        "Current Time: 03/01/2024, 10:00:00 PT\nQuestion: question 1?\n"
    )
    assert trace_prompts(sample["trace"])[0][0]["content"] == prompts()["baselines"]["rag_system"]
    assert len(sample["prediction"]["docs"]) == 20  # top 20 of 41 unique sentences (40 + the empty page's "")


def test_a_record_without_pages_gets_an_empty_reference_block(tmp_path):
    sample = run_crag(tmp_path, [crag_record(1, search_results=[])])[0]
    assert trace_prompts(sample["trace"])[0][1]["content"].startswith("\n------\n\nUsing only the references")


def test_the_options_are_recorded_in_the_signatures_order_with_kg_as_the_task_resolves_it():
    """What run.json records (`Task.config`): every option of the signature in its order, once, kg the task's own
    resolution (on for Task 2 when not given); a value off its choices is one line naming them."""
    import inspect

    from ragbench.tasks.crag.task import CragTask2

    task = CragTask2(web_tokens=10)
    options = [name for name in inspect.signature(CragTask2.__init__).parameters if name not in ("self", "data_path")]
    assert list(task.args) == options and task.args["kg"] is True and task.args["web_tokens"] == 10
    with pytest.raises(ConfigError) as caught:
        CragTask1(page_executor="fork")
    assert str(caught.value) == "task crag_t1: page_executor 'fork' is not one of process, thread"
