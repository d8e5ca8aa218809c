"""A sample's size is bounded (ragbench._values.json_values: MAX_VALUES values, MAX_BYTES bytes of JSON text):
a system that puts a runaway value in its trace or extras fails that example, counted, with a message naming
the deepest value that alone is over the bound (never one of the numbers it holds); the run reaches
results.json and --resume does too. The bounds are lowered here, so the values are small."""

from __future__ import annotations

import ast
import io
import json
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_plugin_faults import folder_samples

from ragbench._storage import sample_files
from ragbench._storage.sample_files import line_offsets, located_samples
from ragbench._values import json_values
from ragbench._values.json_values import json_problem, measured
from ragbench.api import Prediction, System, SystemDeclaration
from ragbench.testing import run_eval

BYTES = 100_000  # the bound on a sample's JSON text in these tests
VALUES = 2_000  # and on its values


@pytest.fixture
def small_bounds(monkeypatch):
    monkeypatch.setattr(json_values, "MAX_BYTES", BYTES)
    monkeypatch.setattr(json_values, "MAX_VALUES", VALUES)


class Recording(System):
    """Records a step whose outputs are OUTPUTS[example id] (default: a few words) and answers "a"."""

    name = "recording"
    declares = SystemDeclaration(uses_llm=False)
    OUTPUTS: dict[str, dict] = {}

    async def run(self, example, ctx):
        ctx.record_step("read", inputs={"q": example.question}, outputs=self.OUTPUTS.get(example.id, {"n": 1}))
        return Prediction(example.id, answer="a")


def test_a_huge_string_in_a_step_fails_its_example_named_and_the_run_finishes_and_resumes(tmp_path, small_bounds):
    first = run_eval("demo", Recording, limit=3, output=tmp_path / "run").samples["demo"][0].id
    Recording.OUTPUTS = {first: {"pages": 3, "text": "x" * (2 * BYTES)}}
    folder = tmp_path / "huge"
    for resume in (False, True):
        run = run_eval("demo", Recording, limit=3, output=folder, resume=resume)
        assert run.results["counts"]["demo"] == {**run.results["counts"]["demo"], "records": 3, "failed": 1}
        [failed] = [s for s in run.samples["demo"] if s.error]
        assert failed.id == first and failed.error == (
            f"UnwritableSample: `sample['trace'][0]['response']['text']` is a string of {2 * BYTES:,} characters, "
            f"over {BYTES:,} bytes of JSON, the bound on a whole sample; every value a task, system or metric hands "
            "ragbench must be JSON, of bounded size (docs/writing-plugins.md)"
        )
        assert json.loads((folder / "results.json").read_text())["counts"] == run.results["counts"]
        samples, unreadable = folder_samples(folder)
        assert len(samples) == 3 and not unreadable
        assert max(len(line) for line in (folder / "samples" / "demo.jsonl").read_bytes().splitlines()) < BYTES


def test_many_values_are_named_at_the_value_that_holds_them_not_at_one_of_its_numbers(tmp_path, small_bounds):
    first = run_eval("demo", Recording, limit=2, output=tmp_path / "run").samples["demo"][0].id
    Recording.OUTPUTS = {first: {"kept": [1, 2], "ids": list(range(2 * VALUES))}}
    run = run_eval("demo", Recording, limit=2, output=tmp_path / "many")
    [failed] = [s for s in run.samples["demo"] if s.error]
    assert failed.error.startswith(
        f"UnwritableSample: `sample['trace'][0]['response']['ids']` holds more than {VALUES:,} values, the bound on "
        "a whole sample; "
    )
    assert (tmp_path / "many" / "results.json").is_file()


def test_a_sample_over_the_bound_only_in_all_is_named_whole_with_its_largest_part(small_bounds):
    line = {"index": 0, "extras": {"a": "x" * (BYTES * 2 // 5)}, "trace": [{"b": "y" * (BYTES * 3 // 5)}, {"c": "z"}]}
    assert json_problem(line, "sample") == (
        f"`sample` is over {BYTES:,} bytes of JSON, the bound on a whole sample; its largest part: `sample['trace']`"
    )


def test_text_that_escapes_write_over_the_bound_is_measured_as_written(tmp_path, small_bounds):
    """A control character is a byte the walk counts and six bytes of JSON (\\u0001): the line is measured."""
    first = run_eval("demo", Recording, limit=2, output=tmp_path / "run").samples["demo"][0].id
    Recording.OUTPUTS = {first: {"kept": "k", "text": "\x01" * (BYTES // 3)}}
    run = run_eval("demo", Recording, limit=2, output=tmp_path / "escaped")
    [failed] = [s for s in run.samples["demo"] if s.error]
    assert failed.error.startswith("UnwritableSample: `sample` is ") and failed.error.endswith(
        f"bytes of JSON, over {BYTES:,}, the bound on a whole sample; its largest part: `sample['trace']`; every "
        "value a task, system or metric hands ragbench must be JSON, of bounded size (docs/writing-plugins.md)"
    )
    lines = (tmp_path / "escaped" / "samples" / "demo.jsonl").read_bytes().splitlines()
    assert len(lines) == 2 and max(map(len, lines)) < BYTES


def test_a_prediction_with_runaway_extras_is_the_systems_counted_failure(tmp_path, small_bounds):
    class Hoarding(System):
        name = "hoarding"
        declares = SystemDeclaration(uses_llm=False)

        async def run(self, example, ctx):
            return Prediction(example.id, answer="a", extras={"seen": [[n] for n in range(VALUES)]})

    run = run_eval("demo", Hoarding, limit=2, output=tmp_path / "run")
    assert run.results["counts"]["demo"]["failed"] == 2
    assert all(
        f"`prediction['extras']['seen']` holds more than {VALUES:,} values" in sample.error
        for sample in run.samples["demo"]
    )


def at(value, keys):
    for key in keys:
        value = value[key]
    return value


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=6), inner, max_size=6),
    max_leaves=40,
)


@settings(max_examples=80, deadline=None)
@given(value=JSON, bound=st.integers(30, 400), by_values=st.booleans())  # bytes: more than one number writes
def test_any_value_is_within_the_bound_or_named_at_the_deepest_value_over_it(value, bound, by_values):
    """Accepted: the whole is within the bound. Refused for its size: the named value is there, alone over
    the bound, and none of its parts is."""
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(json_values, "MAX_VALUES" if by_values else "MAX_BYTES", bound)
        found = json_values._Walk("sample").problem(value, 0)
        if found is None:
            assert measured(value, by_values) <= bound
            return
        named = at(value, [ast.literal_eval(step[1:-1]) for step in found.path])
        assert measured(named, by_values) > bound
        parts = named.values() if isinstance(named, dict) else named if isinstance(named, list) else []
        assert all(measured(part, by_values) <= bound for part in parts)


def test_a_line_longer_than_the_writer_writes_is_not_read_its_example_runs_again_and_the_run_resumes(
    tmp_path, small_bounds
):
    """A line over the bound (an older ragbench's, which had none): a checkpoint repair, its example run again."""
    Recording.OUTPUTS = {}
    run_eval("demo", Recording, limit=3, output=tmp_path / "run")
    path = tmp_path / "run" / "samples" / "demo.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    huge = json.loads(lines[1])
    huge["trace"][0]["response"]["text"] = "x" * (3 * BYTES)
    path.write_text("\n".join([lines[0], json.dumps(huge), lines[2]]) + "\n", encoding="utf-8")
    resumed = run_eval("demo", Recording, limit=3, output=tmp_path / "run", resume=True)
    assert resumed.complete and resumed.results["counts"]["demo"]["scored"] == 3
    [repair] = resumed.results["checkpoint_repairs"]["demo"]
    limit = BYTES + sample_files.STAMP_BYTES
    assert (
        f"demo.jsonl:2: a line of {len(json.dumps(huge)) + 1:,} bytes, over the {limit:,} a line of this file holds"
        in repair
    )


def test_a_long_line_is_passed_over_a_piece_at_a_time(tmp_path, small_bounds):
    path = tmp_path / "demo.jsonl"
    long_line = b'{"index": 1, "text": "' + b"x" * (40 * 2**20) + b'"}\n'
    path.write_bytes(b'{"index": 0}\n' + long_line + b'{"index": 2}')
    tracemalloc.start()
    try:
        located = list(located_samples(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20  # the line is 40 MiB
    assert [(item.line, item.start, item.end) for item in located] == [
        (0, 0, 13),
        (1, 13, 13 + len(long_line)),
        (2, 13 + len(long_line), 25 + len(long_line)),
    ]
    assert [item.value["index"] for item in (located[0], located[2])] == [0, 2]
    assert "not read" in str(located[1].value)


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=8), ended=st.booleans())
def test_line_offsets_are_every_lines_start_and_the_size_read_a_block_at_a_time(lines, ended):
    text = b"\n".join(lines) + (b"\n" if ended and lines else b"")
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patched:
        patched.setattr(sample_files, "BLOCK", 5)
        path = Path(folder) / "demo.jsonl"
        path.write_bytes(text)
        starts = [0]
        for line in io.BytesIO(text):  # as a file's lines are iterated: at newlines alone
            starts.append(starts[-1] + len(line))
        assert list(line_offsets(path)) == (starts if text else [0])
