"""JSON nested too deeply to parse (beyond Python's recursion limit) is a bad record like any other
unparseable line: counted, named, never a RecursionError, and the run resumes."""

from __future__ import annotations

import json

import pytest

from conftest import write_jsonl
from ragbench.api import RecordError
from ragbench.api.data import parse_json, read_lines
from support.helpers import cli_here, run, samples, task_counts

DEEP = '{"a": ' * 100_000 + "1" + "}" * 100_000


def test_a_deep_line_is_a_record_error_between_readable_lines(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(f'{{"x": 1}}\n{DEEP}\n{{"x": 2}}\n', encoding="utf-8")
    items = list(read_lines(path))
    assert [item for _, item in items if not isinstance(item, RecordError)] == [{"x": 1}, {"x": 2}]
    error = items[1][1]
    assert isinstance(error, RecordError) and error.line == 2 and "nested too deeply" in str(error)


def test_loads_turns_recursion_into_a_value_error():
    with pytest.raises(ValueError, match="nested too deeply"):
        parse_json(DEEP)


@pytest.mark.parametrize("position", [0, 2], ids=["first record", "later record"])
def test_a_deep_record_in_the_data_is_a_counted_bad_record(tmp_path, popqa_records, position):
    lines: list = list(popqa_records[:4])
    lines.insert(position, DEEP)
    data = write_jsonl(tmp_path / "popqa.jsonl", lines)
    results = run(tmp_path, tasks=["popqa"], model="scripted:echo", data={"popqa": str(data)})
    assert results["counts"]["popqa"] == task_counts(5, 4, bad_records=1)
    bad = [s for s in samples(tmp_path / "run", "popqa") if s.get("bad_record")]
    assert len(bad) == 1 and f"popqa.jsonl:{position + 1}: nested too deeply to parse" in bad[0]["error"]


def test_a_run_with_a_deep_record_ends_in_one_line_and_resumes(tmp_path, popqa_records):
    data = write_jsonl(tmp_path / "popqa.jsonl", [popqa_records[0], DEEP, *popqa_records[1:3]])
    args = (
        "--tasks",
        "popqa",
        "--model",
        "scripted:echo",
        "--data",
        f"popqa={data}",
        "--no-progress",
        "--bootstrap-iters",
        "10",
        "--output",
        str(tmp_path / "r"),
    )
    for attempt in (cli_here(*args), cli_here(*args, "--resume")):
        assert attempt.returncode == 1, attempt.stderr
        assert "Traceback" not in attempt.stderr and "RecursionError" not in attempt.stderr
        assert "1 bad record(s) in the data" in attempt.stderr
    assert json.loads((tmp_path / "r" / "results.json").read_text())["counts"]["popqa"]["scored"] == 3


def test_a_deep_line_in_the_checkpoint_is_dropped_and_its_example_runs_again(tmp_path, popqa_records):
    data = write_jsonl(tmp_path / "popqa.jsonl", popqa_records[:3])
    run(tmp_path, tasks=["popqa"], model="scripted:echo", data={"popqa": str(data)})
    checkpoint = tmp_path / "run" / "samples" / "popqa.jsonl"
    lines = checkpoint.read_text(encoding="utf-8").splitlines()
    checkpoint.write_text("\n".join([lines[0], DEEP, lines[2]]) + "\n", encoding="utf-8")
    results = run(tmp_path, tasks=["popqa"], model="scripted:echo", data={"popqa": str(data)}, resume=True)
    assert results["counts"]["popqa"]["scored"] == 3 and results["complete"]
    assert "nested too deeply" in results["checkpoint_repairs"]["popqa"][0]


def test_a_deep_json_file_is_one_config_error_naming_it(tmp_path):
    """A run folder's run.json nested too deeply, read by `ragbench rescore`: one line naming it, exit 2."""
    path = tmp_path / "run" / "run.json"
    path.parent.mkdir()
    path.write_text(DEEP, encoding="utf-8")
    done = cli_here("rescore", str(path.parent))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.strip()]
    assert line.startswith(f"ragbench: error: {path}: nested too deeply")


def test_an_alce_file_with_a_deep_record_is_refused_in_one_line_before_the_run(tmp_path):
    from support.alce_helpers import records

    path = tmp_path / "asqa.json"
    path.write_text("[" + json.dumps(records("asqa")[0]) + ", " + DEEP + "]", encoding="utf-8")
    result = cli_here(
        "--tasks",
        "alce_asqa",
        "--model",
        "scripted:echo",
        "--data",
        f"alce_asqa={path}",
        "--output",
        str(tmp_path / "r"),
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "nested too deeply" in result.stderr and not (tmp_path / "r").exists()
