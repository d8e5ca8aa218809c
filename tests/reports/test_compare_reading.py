"""`ragbench compare` reads a samples file a block at a time and takes plainly current lines by a quick check: the
same scores, slices and errors as reading every line as `located_samples` does."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench._reports.compare.run_scores import TaskScores, parse_sample_line, read_task_scores
from ragbench._storage import sample_files
from ragbench._storage.sample_files import located_samples
from ragbench.api import RecordError

KEYS, FIELDS = ("em", "f1"), ("level", "kind")
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(2**62, 2**80) | st.floats() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["a", "docs"]), inner, max_size=2),
    max_leaves=4,
)
fields = [
    "id", "index", "schema_version", "error", "bad_record", "example_sha256", "meta", "scores", "prediction",
    "trace", "judge_trace", "counted", "question",
]  # fmt: skip
good = st.fixed_dictionaries(
    {
        "schema_version": st.just(2),
        "index": st.integers(0, 5),
        "id": st.sampled_from(["q1", "q2", 3]),
        "scores": st.dictionaries(st.sampled_from(KEYS), st.floats(0, 1) | st.integers(0, 1) | st.none()),
        "meta": st.dictionaries(st.sampled_from(FIELDS), st.sampled_from(["a", 1, 1.0, True, None])),
        "example_sha256": st.sampled_from(["x", "y", None]),
        "trace": st.just([{"kind": "llm", "name": "answer", "request": {}, "response": None, "error": None}]),
        "prediction": st.just({"answer": "yes", "docs": [{"id": "d"}]}),
    }
)
record = st.one_of(
    good, good.flatmap(lambda g: st.dictionaries(st.sampled_from(fields), values).map(lambda d: {**g, **d}))
)
line = st.one_of(
    record.map(lambda r: json.dumps(r).encode()),
    record.map(lambda r: json.dumps(r).encode()[: len(json.dumps(r)) // 2]),  # cut short
    st.sampled_from([b"", b"  ", b"\xef\xbb\xbf{}", b'{"index": 1, "id": "\\ud800"}', b"\xff{", b"null", b"[1]"]),
)


def columns(scores: TaskScores) -> tuple:
    digests, has = scores.digests()
    slices = [scores.slice_codes(field) for field in FIELDS]
    return (
        list(scores.rows.items()),
        [scores.values(key).tobytes() for key in KEYS],
        [scores.has_odd(key) for key in KEYS],
        digests.tobytes(),
        has.tobytes(),
        [(codes.tobytes(), distinct) for codes, distinct in slices],
        {field: labels.labels() for field, labels in scores.slice_labels().items()},
    )


@given(st.lists(line, max_size=8))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_samples_file_is_read_as_reading_every_line_fully_reads_it(tmp_path, lines):
    path = tmp_path / "levels.jsonl"
    path.write_bytes(b"\n".join(lines))
    careful, errors = TaskScores(KEYS, FIELDS), []
    for located in located_samples(path, older_shapes=True, loads=parse_sample_line):
        if isinstance(located.value, RecordError):
            errors.append(str(located.value))
        else:
            careful.add(located.value)
    quick, quick_errors = read_task_scores(path, KEYS, FIELDS)
    assert [str(error) for error in quick_errors] == errors
    assert columns(quick) == columns(careful)


def test_a_line_too_long_to_hold_is_an_error_and_reading_goes_on_after_it(tmp_path, monkeypatch):
    monkeypatch.setattr(sample_files, "most_line_bytes", lambda: 100)
    monkeypatch.setattr(sample_files, "BLOCK", 16)
    path = tmp_path / "levels.jsonl"
    sample = {"schema_version": 2, "index": 0, "id": "q1", "scores": {"em": 1.0}}
    path.write_text(json.dumps(sample) + "\n" + "x" * 500 + "\n" + json.dumps({**sample, "id": "q2"}) + "\n")
    scores, errors = read_task_scores(path, KEYS, FIELDS)
    assert list(scores.rows) == ["q1", "q2"]
    assert [str(error) for error in errors] == [
        f"{path}:2: a line of 501 bytes, over the 100 a line of this file holds: not read"
    ]
