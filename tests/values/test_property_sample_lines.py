"""Property: any sample record (any text, any JSON in gold, meta and extras, any scores and failures) is written
as a line (`sample_line`) that ragbench's reader takes (`sample_problem`) and reads back, through JSON, as a
record that writes the same line, key for key."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._records import SampleRecord, sample_line
from ragbench._storage.run_shapes import sample_problem
from ragbench.api import Document, Step

TEXT = st.text(max_size=8)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
OBJECTS = st.dictionaries(TEXT, JSON_VALUES, max_size=3)
STEPS = st.lists(
    st.builds(
        Step,
        kind=st.sampled_from(["llm", "retrieval", "custom"]),
        name=TEXT,
        request=st.fixed_dictionaries({"prompt": TEXT}),
        response=st.fixed_dictionaries({"texts": st.lists(TEXT, max_size=2)}),
        error=st.none() | TEXT,
        prompt_tokens=st.integers(0, 99),
    ),
    max_size=2,
)
FIELDS = st.fixed_dictionaries(
    {
        "id": st.none() | TEXT,
        "index": st.integers(0, 10**6),
        "question": TEXT,
        "gold": OBJECTS,
        "answer": TEXT,
        "error": st.none() | TEXT,
        "trace": STEPS,
        "scores": st.dictionaries(TEXT, st.none() | st.floats(allow_nan=False), max_size=3),
    },
    optional={
        "meta": OBJECTS,
        "turns": st.lists(st.fixed_dictionaries({"role": TEXT, "content": TEXT}), max_size=2),
        "gold_references": st.lists(TEXT, max_size=2),
        "gold_references_error": TEXT,
        "example_sha256": TEXT,
        "output": TEXT,
        "raw_output": TEXT,
        "citations": st.lists(st.lists(st.integers(1, 9), max_size=2), max_size=2),
        "docs": st.lists(st.builds(Document, id=TEXT, title=TEXT, text=TEXT), max_size=2),
        "extras": OBJECTS,
        "judge_trace": STEPS,
        "score_errors": st.dictionaries(TEXT, TEXT, max_size=2),
        "traceback": TEXT,
        "counted": st.dictionaries(TEXT, st.dictionaries(TEXT, st.integers(0, 9), max_size=2), max_size=2),
        "infrastructure_failures": st.lists(TEXT, max_size=2),
        "seconds": st.floats(0, 1e6),
        "rescored": st.booleans(),
        "bad_record": st.booleans(),
    },
)


@settings(max_examples=150, deadline=None)
@given(FIELDS)
def test_a_records_line_is_read_and_read_back_as_a_record_that_writes_it_again(values):
    line = sample_line(SampleRecord.sealed(**values))
    assert sample_problem(line) is None and next(iter(line)) == "schema_version"
    read = json.loads(json.dumps(line))
    assert list(sample_line(SampleRecord.from_dict(read)).items()) == list(read.items())
