"""results.json's writer and its typed `Results` (ragbench._reports.results.schema), units with no public face: any
`Results` written (`results_text`) and read back is equal, a run's results.json read and written again is the same
text, and the JSON schema docs/outputs.md documents is the one the dataclasses make. What a user meets of it (the
version, older and later files, the schema a run's file follows): test_results_schema.py."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_results_schema import documented_schema, finished  # noqa: F401 (finished: a fixture)

from ragbench._reports.results.file import read_results, results_text
from ragbench._reports.results.schema import SCHEMA_VERSION, Results, json_schema
from ragbench.api.data import parse_json


def test_a_runs_results_json_read_and_written_again_is_the_same_text(finished):
    read = read_results(finished / "results.json", "compare")
    assert read.schema_version == SCHEMA_VERSION
    assert results_text(read) == (finished / "results.json").read_text()


METRIC_VALUES = st.one_of(
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(2**1100), 2**1100),
    st.sampled_from([1.7976931348623157e308, -0.0, 5e-324]),
)
NAMES = st.text(st.characters(codec="utf-8"), min_size=1, max_size=8)
# a task's name is its samples file's stem (results.json's writer refuses another, as its reader does)
TASK_NAMES = NAMES.filter(lambda name: name.isprintable() and not {"/", "\\"} & set(name) and name not in (".", ".."))


@st.composite
def results_objects(draw) -> Results:
    tasks = draw(st.lists(TASK_NAMES, min_size=1, max_size=3, unique=True))
    keys = {task: draw(st.dictionaries(NAMES, METRIC_VALUES, max_size=3)) for task in tasks}
    details = {
        task: {
            key: {
                "value": value,
                "ci95": draw(
                    st.none() | st.lists(METRIC_VALUES.filter(lambda v: v is not None), min_size=2, max_size=2)
                ),
                "n": draw(st.integers(0, 10**6)),
                "n_none": 0,
                "n_errors": draw(st.integers(0, 9)),
                "higher_is_better": draw(st.sampled_from([True, False, None])),
            }
            for key, value in keys[task].items()
        }
        for task in tasks
    }
    counts = {
        task: dict.fromkeys(
            ("records", "scored", "failed", "bad_records", "missing", "metric_failures"), draw(st.integers(0, 10**9))
        )
        for task in tasks
    }
    return Results(
        results=keys,
        details=details,
        counts=counts,
        complete=draw(st.booleans()),
        cost={"examples": draw(st.integers(0, 10**9)), "wall_seconds": draw(METRIC_VALUES)},
        config={"tasks": tasks},
        versions={"ragbench": "0"},
        data_sha256=draw(st.none() | st.just({task: "0" * 64 for task in tasks})),
        system_stats=draw(st.none() | st.just({tasks[0]: {"docs": draw(METRIC_VALUES)}})),
        date=draw(st.none() | st.text(max_size=5)),
        other=draw(st.dictionaries(st.sampled_from(["notes", "extra"]), st.text(max_size=5), max_size=2)),
    )


@settings(max_examples=50)
@given(results=results_objects())
def test_results_written_and_read_back_are_equal(results):
    assert Results.from_dict(parse_json(results_text(results))) == results


def test_the_schema_in_the_docs_is_the_one_the_dataclasses_make():
    assert documented_schema() == json_schema(), "regenerate: python -m ragbench._reports.results.schema"
