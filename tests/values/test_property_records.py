"""Property: any records a task's data file may hold (any unicode, lone surrogates included, any ids, any JSON
in meta, lines that are not records), written as JSON Lines or as a JSON document, go through the loader, a
scripted run, the sample writer and back: no traceback, every record is an example or a counted bad record,
and an example's strings come back exactly as the file holds them."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api import ConfigError, RecordError
from ragbench.api.data import iter_jsonl
from ragbench.testing import Registry
from support.helpers import run

ANY_CHARACTER = st.characters(codec=None, exclude_categories=())  # lone surrogates too
TEXT = st.text(ANY_CHARACTER, max_size=12)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
RECORDS = st.fixed_dictionaries(
    {"id": st.integers() | TEXT, "question": TEXT, "answers": st.lists(TEXT, min_size=1, max_size=3) | TEXT},
    optional={"info": JSON_VALUES, "kind": TEXT},
)
NOT_RECORDS = st.sampled_from(["not json", "[1, 2]", '{"id": "cut', '"a string"', "\x00"])
FIRST = {"id": "first", "question": "q?", "answers": ["a"]}  # the pre-flight refuses data with no usable record
TASK = """task: fuzz
data: {{path: {data}{records}}}
fields:
  gold: {{answers: answers}}
  meta: {{info: {{path: info, optional: true}}}}
  slices: {{kind: {{path: kind, optional: true}}}}
metrics: [em]
"""


def as_read(value):
    """The value as a JSON file holds it (two lone surrogates that pair are one character there)."""
    return json.loads(json.dumps(value))


def run_over(folder: Path, data: Path, records: str, answer: str, registry: Registry) -> tuple[dict, list[dict]]:
    task = folder / "fuzz.yaml"
    task.write_text(TASK.format(data=data.name, records=records), encoding="utf-8")
    rules = folder / "rules.json"
    rules.write_text(json.dumps([{"response": answer}]), encoding="utf-8")
    results = run(
        folder, tasks=[str(task)], system="closed_book", model=f"scripted:{rules}", bootstrap_iters=0, registry=registry
    )
    lines = [item for _, item in iter_jsonl(folder / "run" / "samples" / "fuzz.jsonl")]
    samples = [item for item in lines if not isinstance(item, RecordError)]
    assert len(samples) == len(lines)  # no unreadable line
    return results, samples


def assert_each_record_is_an_example_or_a_counted_bad_record(results, samples, expected, answer):
    """`expected`: per line of the data, the record as the file holds it, or None where the line is not one."""
    counts = results["counts"]["fuzz"]
    assert counts["records"] == len(expected) == len(samples)
    assert counts["bad_records"] == sum(1 for s in samples if s.get("bad_record"))
    assert counts["failed"] == 0
    for sample in sorted(samples, key=lambda s: s["index"]):
        record = expected[sample["index"]]
        if sample.get("bad_record"):
            assert sample["error"].startswith("bad record: ")
            continue
        assert record is not None, sample
        assert sample["id"] == str(record["id"])
        assert sample["question"] == record["question"]
        answers = record["answers"]
        assert sample["gold"]["answers"] == (answers if isinstance(answers, list) else [answers])
        assert sample.get("meta", {}).get("info") == record.get("info")
        assert sample["output"] == answer


@settings(max_examples=25)
@given(lines=st.lists(RECORDS | NOT_RECORDS, max_size=6), answer=TEXT, ascii_only=st.booleans())
def test_any_jsonl_records_load_run_and_read_back(shared_registry, lines, answer, ascii_only):
    lines = [FIRST, *lines]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        data = folder / "data.jsonl"
        # not ASCII-only: a lone surrogate is written as bytes UTF-8 has no reading of (a bad line, counted)
        data.write_bytes(
            b"".join(
                (line if isinstance(line, str) else json.dumps(line, ensure_ascii=ascii_only)).encode(
                    "utf-8", "surrogatepass"
                )
                + b"\n"
                for line in lines
            )
        )
        expected = [as_read(line) if isinstance(line, dict) else None for line in lines]
        try:
            results, samples = run_over(folder, data, "", answer, shared_registry)
        except ConfigError as refused:  # the pre-flight reads past the first record for the file's encoding
            assert not ascii_only and "is not UTF-8" in str(refused) and "\n" not in str(refused)
            return
        assert_each_record_is_an_example_or_a_counted_bad_record(results, samples, expected, as_read(answer))


@settings(max_examples=25)
@given(records=st.lists(RECORDS | JSON_VALUES, max_size=6), answer=TEXT)
def test_any_json_document_records_load_run_and_read_back(shared_registry, records, answer):
    records = [FIRST, *records]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        data = folder / "data.json"
        data.write_text(json.dumps({"data": records}), encoding="utf-8")
        expected = [as_read(record) if isinstance(record, dict) else None for record in records]
        results, samples = run_over(folder, data, ", records: data", answer, shared_registry)
        assert_each_record_is_an_example_or_a_counted_bad_record(results, samples, expected, as_read(answer))
