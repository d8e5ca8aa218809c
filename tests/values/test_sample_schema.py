"""The sample record's schema: every line of samples/<task>.jsonl is written at the current `schema_version` by the
one writer, read as a `SampleRecord` by the one reader (`read_samples`), which reads a file of ragbench 0.1's
format (no version: version 1) and refuses a newer version's line by file and line."""

from __future__ import annotations

import copy
import json
import pickle
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._read_only import ReadOnlyError
from ragbench._records import SampleRecord, read_samples, without_texts
from ragbench._reports.compare.comparison import load_run
from ragbench._storage.run_shapes import SAMPLE_VERSIONS
from ragbench.api import Document, RecordError, Step
from support import paths
from support.helpers import run

V1_SAMPLES = paths.DATA / "samples" / "demo_v1.jsonl"  # written by ragbench 0.1 (f2304de)


def test_every_sample_line_is_written_at_the_current_schema_version_first(tmp_path: Path) -> None:
    run(tmp_path, tasks=["demo"], system="vanilla", model="scripted:echo", limit=3)
    lines = [json.loads(line) for line in (tmp_path / "run" / "samples" / "demo.jsonl").read_text().splitlines()]
    assert len(lines) == 3 and all(next(iter(line.items())) == ("schema_version", 2) for line in lines)
    assert [record.schema_version for record in read_samples(tmp_path / "run" / "samples" / "demo.jsonl")] == [2] * 3


def test_a_samples_file_without_a_version_reads_as_version_1_field_by_field() -> None:
    errors: list[RecordError] = []
    first, second, bad = read_samples(V1_SAMPLES, errors)
    assert not errors and {first.schema_version, second.schema_version, bad.schema_version} == {1}
    assert (first.id, first.index, first.question, first.gold) == (
        "9000",
        0,
        "What is the capital of France?",
        {"answers": ["Paris"]},
    )
    assert first.answer == first.output == "### Response:" and first.gold_references == ["Paris"]
    assert first.docs == [
        Document("1000", "France", "Paris is the capital and largest city of France, on the river Seine.", score=1.9)
    ]
    assert [step.kind for step in first.trace] == ["retrieval", "llm"] and first.example_sha256.startswith("c16ac04d")
    assert first.scores["em"] == 0.0 and first.example().gold == {"answers": ["Paris"]}
    assert first.prediction().docs == first.docs and first.prediction().trace == first.trace
    assert (bad.id, bad.bad_record, bad.index) == (None, True, 2)


def test_a_line_of_a_newer_schema_version_is_passed_over_and_named_by_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl"
    lines = V1_SAMPLES.read_text().splitlines()
    newer = {**json.loads(lines[1]), "schema_version": max(SAMPLE_VERSIONS) + 1}
    path.write_text("\n".join([lines[0], json.dumps(newer), lines[2]]) + "\n")
    errors: list[RecordError] = []
    assert [record.index for record in read_samples(path, errors)] == [0, 2]
    assert [str(error) for error in errors] == [
        f"{path}:2: not a sample record of this ragbench (`schema_version` 4: a sample of another ragbench (this one "
        "reads versions 1, 2, 3); read it with the ragbench that wrote it)"
    ]


def test_a_run_resumed_over_a_samples_file_of_version_1_keeps_its_examples(tmp_path: Path) -> None:
    run(tmp_path, tasks=["demo"], system="vanilla", model="scripted:echo", limit=2)
    samples = tmp_path / "run" / "samples" / "demo.jsonl"
    shutil.copy(V1_SAMPLES, samples)  # the same two examples (and a bad record), as ragbench 0.1 wrote them
    (tmp_path / "run" / "results.json").unlink()
    results = run(tmp_path, tasks=["demo"], system="vanilla", model="scripted:echo", limit=2, resume=True)
    assert results["counts"]["demo"]["records"] == 2 and results["cost"]["examples"] == 2  # the saved two, none rerun
    assert [record.schema_version for record in read_samples(samples)] == [1, 1]


TEXT = st.text(max_size=8)
SCORES = st.dictionaries(TEXT, st.none() | st.floats(allow_nan=False, allow_infinity=False), max_size=3)


def step(kind: str, name: str, prompt: str, texts: list[str]) -> dict:
    return Step(kind, name, {"prompt": prompt}, {"texts": texts, "finish_reason": "stop"}).to_dict()


KINDS = st.sampled_from(["llm", "retrieval", "custom"])
STEPS = st.lists(st.builds(step, KINDS, TEXT, TEXT, st.lists(TEXT, max_size=2)), max_size=3)
CITATIONS = st.lists(st.lists(st.integers(1, 9), max_size=2), max_size=2)
LINES = st.fixed_dictionaries(
    {
        "schema_version": st.just(2),
        "index": st.integers(0, 10**6),
        "id": TEXT,
        "question": TEXT,
        "gold": st.dictionaries(TEXT, st.lists(TEXT, max_size=2), max_size=2),
        "prediction": st.fixed_dictionaries(
            {"answer": TEXT}, optional={"citations": CITATIONS, "extras": st.dictionaries(TEXT, TEXT)}
        ),
        "trace": STEPS,
        "scores": SCORES,
        "error": st.none() | TEXT,
    }
)


@settings(max_examples=60, deadline=None)
@given(LINES, st.booleans())
def test_a_record_is_read_by_its_attributes_not_as_the_lines_dict(line: dict, has_text: bool) -> None:
    record = SampleRecord.from_dict(line, has_text)
    seen = line if has_text else without_texts(line)
    assert (record.id, record.question, record.gold, record.scores, record.error) == (
        seen["id"],
        seen["question"],
        seen["gold"],
        seen["scores"],
        seen["error"],
    )
    assert record.answer == seen["prediction"]["answer"] and [step.to_dict() for step in record.trace] == seen["trace"]
    for read in (lambda: record["scores"], lambda: "scores" in record):
        with pytest.raises(TypeError):
            read()
    assert not hasattr(record, "get") and not hasattr(record, "keys")


STEP_LINES = st.lists(
    st.fixed_dictionaries(
        {
            "kind": st.sampled_from(["llm", "retrieval", "custom"]),
            "name": st.text(max_size=4),
            "request": st.dictionaries(
                st.sampled_from(["prompt", "messages", "k", "max_tokens"]), st.integers() | st.text(max_size=4)
            ),
            "response": st.none()
            | st.fixed_dictionaries(
                {"text": st.text(max_size=4), "finish_reason": st.sampled_from(["stop", "length"])}
            ),
        }
    ),
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(trace=STEP_LINES, judge_trace=STEP_LINES, has_text=st.booleans())
def test_a_record_read_in_bulk_is_the_record_its_line_makes_however_it_is_read_copied_or_changed(
    trace, judge_trace, has_text
):
    """`read_samples` makes a record's steps when they are first read: it equals the record made at once, and so do
    its copies, pickles and changed copies taken before its steps were read."""
    line = {
        "schema_version": 2,
        "index": 0,
        "id": "1",
        "prediction": {"answer": "a"},
        "trace": trace,
        "judge_trace": judge_trace,
        "scores": {"em": 1.0},
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "demo.jsonl"
        path.write_text(json.dumps(line) + "\n")
        made = [next(read_samples(path, has_text=has_text)) for _ in range(5)]
    whole = SampleRecord.from_dict(copy.deepcopy(line), has_text=has_text)
    for copied in (
        made[0],
        copy.copy(made[1]),
        pickle.loads(pickle.dumps(made[2])),
        replace(made[3], answer="a"),
        made[4].read_only(answer="a"),
    ):
        assert copied == whole and copied.trace == whole.trace and copied.judge_trace == whole.judge_trace
    with pytest.raises(ReadOnlyError):
        made[0].trace.append(None)


def test_compare_reads_no_trace_step(tmp_path, monkeypatch):
    """`compare` reads ids, scores, slices and digests: the steps of the records it reads are never made."""
    import ragbench._records as records

    run(tmp_path, name="a", tasks=["demo"], system="closed_book", model="scripted:echo")
    made: list[dict] = []
    monkeypatch.setattr(records, "_read_step", lambda data: made.append(data))
    loaded = load_run(tmp_path / "a")
    assert loaded.samples["demo"] and made == []
