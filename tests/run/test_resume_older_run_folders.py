"""--resume of a run folder written by another version (or edited by hand): a sample line of another shape
is passed over like a line a kill cut short (named, counted, its example run again), a missing field is
read as empty, and a run.json of another shape is refused in one line naming it and the fix; never a
traceback."""

from __future__ import annotations

import json
import shutil

import pytest
from test_resume_data_changes import RECORDS, TASK, closed_book_run

from support.helpers import cli_here, cli_run_args, comparable, samples


def args(folder, output):
    return [
        *cli_run_args(f"scripted:{folder / 'rules.json'}", task=str(folder / "t.yaml")),
        "--no-progress",
        "--bootstrap-iters",
        "0",
        "--output",
        str(output),
    ]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run of RECORDS (q1 answered right, the others wrong), with its inputs."""
    folder = tmp_path_factory.mktemp("older")
    (folder / "t.yaml").write_text(TASK)
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    (folder / "rules.json").write_text(json.dumps([{"response": "one"}]))
    assert cli_here(*args(folder, folder / "run")).returncode == 0
    return folder


def resume(finished, tmp_path, damage_sample=None, damage_meta=None):
    """A copy of the finished run, damaged, resumed in-process."""
    shutil.copytree(finished / "run", tmp_path / "run")
    path = tmp_path / "run" / "samples" / "tq.jsonl"
    if damage_sample is not None:
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for record in records[1:3]:  # q2 and q3
            damage_sample(record)
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return closed_book_run(finished / "t.yaml", f"scripted:{finished / 'rules.json'}", tmp_path / "run", resume=True)


ANOTHER_SHAPE = {
    "prediction a string": (lambda r: r.update(prediction="two"), "`prediction` is a string, not an object"),
    "prediction a list": (lambda r: r.update(prediction=["two"]), "`prediction` is a list, not an object"),
    "a document not an object": (lambda r: r["prediction"].update(docs=["text"]), "`prediction.docs[0]` is a string"),
    "trace an object": (lambda r: r.update(trace={"llm": 1}), "`trace` is an object, not a list"),
    "a trace step a string": (lambda r: r.update(trace=["llm"]), "`trace[0]` is a string, not an object"),
    "scores a list": (lambda r: r.update(scores=[0.0]), "`scores` is a list, not an object"),
    "score errors a list": (lambda r: r.update(score_errors=["em"]), "`score_errors` is a list"),
    "counted a list": (lambda r: r.update(counted=[1]), "`counted` is a list"),
    "gold a list": (lambda r: r.update(gold=["two"]), "`gold` is a list"),
    "id an object": (lambda r: r.update(id={"q": 2}), "`id` is an object"),
}


@pytest.mark.parametrize("damage", ANOTHER_SHAPE)
def test_a_sample_of_another_shape_is_named_and_its_example_runs_again(finished, tmp_path, damage):
    change, said = ANOTHER_SHAPE[damage]
    outcome = resume(finished, tmp_path, change)
    repairs = outcome.results["checkpoint_repairs"]["tq"]
    assert len(repairs) == 2 and all(f"not a sample record of this ragbench ({said}" in line for line in repairs)
    assert outcome.results["cost"]["this_attempt"]["examples"] == 2  # q2 and q3 ran again
    again = json.loads((finished / "run" / "results.json").read_text())
    assert comparable(outcome.results) == comparable(again)
    assert [s["id"] for s in samples(tmp_path / "run", "tq")] == ["q1", "q2", "q3", "q4"]


@pytest.mark.parametrize(
    "field", ["prediction", "trace", "scores", "question", "gold", "example_sha256", "output", "gold_references"]
)
def test_a_sample_without_a_field_is_read_as_having_it_empty(finished, tmp_path, field):
    outcome = resume(finished, tmp_path, lambda record: record.pop(field, None))
    counts = outcome.results["counts"]["tq"]
    assert counts["records"] == 4 and counts["scored"] + counts["failed"] == 4 and counts["missing"] == 0
    assert "checkpoint_repairs" not in outcome.results


@pytest.mark.parametrize(
    "damage",
    [
        {"attempts": {"a": 1}},
        {"attempts": ["x"]},
        {"records": [4]},
        {"records": {"tq": "4"}},
        {"finished": "yes"},
        {"data": [1]},
    ],
)
def test_a_run_json_of_another_shape_is_refused_in_one_line_naming_it_and_the_fix(finished, tmp_path, damage):
    shutil.copytree(finished / "run", tmp_path / "run")
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    (tmp_path / "run" / "run.json").write_text(json.dumps({**meta, **damage}))
    saved = (tmp_path / "run" / "samples" / "tq.jsonl").read_bytes()
    resumed = cli_here(*args(finished, tmp_path / "run"), "--resume")
    line = resumed.stderr.strip()
    assert resumed.returncode == 2 and "\n" not in line and "Traceback" not in line, resumed.stderr
    field = next(iter(damage))
    assert f"run.json: its `{field}" in line and "fix it, or --overwrite runs the run again" in line
    assert (tmp_path / "run" / "samples" / "tq.jsonl").read_bytes() == saved
