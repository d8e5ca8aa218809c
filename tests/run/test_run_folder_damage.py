"""A run folder whose files were damaged (a sample line that parses but is no sample, a results.json that is
not one, a folder where a file was, a temporary file a kill left), a data file that is a pipe: one line, never a
traceback, and `--resume` completes the run with the numbers of one never damaged (a lock taken on a full disk or
just after another run ended: tests/run/test_run_folder_faults.py)."""

from __future__ import annotations

import json
import os

import pytest
from test_command_faults import finished  # noqa: F401 (a fixture)
from test_run_folder_faults import popqa, run_args

from support.helpers import cli_here, comparable, run


@pytest.mark.parametrize(
    "line",
    ['{"id": "q1"}', '{"id": "q1", "index": "2"}', '{"id": ["q1"], "index": null}'],
    ids=["no-index", "text-index", "null-index"],
)
def test_a_sample_line_that_parses_but_is_no_sample_is_passed_over_and_run_again(tmp_path, line):
    """A damaged line can still be a JSON object: like a line cut short, it is passed over and counted,
    its example runs again, and the numbers are those of a run never damaged."""
    data = popqa(tmp_path, 6)
    reference = run(
        tmp_path, "reference", tasks=["popqa"], system="vanilla", model="scripted:echo", data={"popqa": str(data)}
    )
    out = tmp_path / "run"
    assert cli_here(*run_args(data, out)).returncode == 0
    sample_file = out / "samples" / "popqa.jsonl"
    kept = [json.loads(text) for text in sample_file.read_text().splitlines() if json.loads(text)["id"] != "q1"]
    sample_file.write_text("".join(json.dumps(record) + "\n" for record in kept) + line + "\n")
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, "finished": False}))  # stopped before its end
    for command in (["rescore", str(out), "--output", str(tmp_path / "rescored")], run_args(data, out, "--resume")):
        done = cli_here(*command)
        assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "results.json").read_text())
    assert comparable(results) == comparable(reference)
    assert sorted(json.loads(text)["id"] for text in sample_file.read_text().splitlines()) == [
        f"q{i}" for i in range(6)
    ]
    exported = cli_here("view", str(out), "--export", str(tmp_path / "site"))
    assert exported.returncode == 0 and "Traceback" not in exported.stderr, exported.stderr


@pytest.mark.parametrize("damage", ["results-a-list", "run-json-a-number", "sample-line-no-index", "samples-a-folder"])
def test_the_viewer_shows_a_damaged_run_or_names_the_fault_in_one_line(tmp_path, finished, damage):
    sample_file = finished / "samples" / "popqa.jsonl"
    if damage == "results-a-list":
        (finished / "results.json").write_text("[1, 2]")
    elif damage == "run-json-a-number":  # and no results.json: the run is read from its run.json
        (finished / "run.json").write_text("7")
        (finished / "results.json").unlink()
    elif damage == "sample-line-no-index":
        with sample_file.open("a") as handle:
            handle.write('{"id": "q9", "index": "x"}\n')
    else:
        sample_file.unlink()
        sample_file.mkdir()
    exported = cli_here("view", str(finished), "--export", str(tmp_path / "site"))
    assert "Traceback" not in exported.stderr, exported.stderr
    if damage == "samples-a-folder":
        assert exported.returncode == 1
        assert exported.stderr.splitlines() == [
            f"ragbench: error: a folder is there, not a file: {sample_file}; "
            "remove it, or put the file there, then run it again"
        ]
    else:
        assert exported.returncode == 0, exported.stderr
        runs = (tmp_path / "site" / "data" / "runs.js").read_text()
        assert ('"state": "stopped"' in runs) == (damage != "sample-line-no-index"), runs


@pytest.mark.parametrize("command", [[], ["check"]], ids=["run", "check"])
def test_a_data_file_that_is_a_pipe_is_refused_at_once_instead_of_waiting_for_a_writer(tmp_path, command):
    fifo = tmp_path / "popqa.jsonl"
    os.mkfifo(fifo)
    refused = cli_here(*command, *run_args(fifo, tmp_path / "run"))
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.splitlines() == [
        f"ragbench: error: --data popqa={fifo}: not a file or folder (a pipe or "
        "device); a run opens its data more than once: save it to a file"
    ]
    assert not (tmp_path / "run").exists()


def test_a_file_that_cannot_be_replaced_is_named_not_its_temporary_file(tmp_path):
    data = popqa(tmp_path, 3)
    out = tmp_path / "run"
    assert cli_here(*run_args(data, out)).returncode == 0
    (out / "results.json").unlink()
    (out / "results.json").mkdir()  # what was results.json is a folder now
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, "finished": False}))
    failed = cli_here(*run_args(data, out, "--resume"))
    assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr
    assert failed.stderr.strip().splitlines()[-1] == (
        f"ragbench: error: Is a directory: {out}/results.json; fix what the error names, then run the same command "
        "with --resume (what finished is saved)"
    )
    assert not list(out.glob(".*.tmp"))


@pytest.mark.parametrize("damage", ["cut-short", "a-list", "an-empty-object"])
@pytest.mark.parametrize("command", ["rescore", "compare"])
def test_a_damaged_results_json_is_named_with_the_resume_that_rebuilds_it(tmp_path, damage, command):
    data = popqa(tmp_path, 4)
    out = tmp_path / "run"
    assert cli_here(*run_args(data, out)).returncode == 0
    whole = (out / "results.json").read_text()
    (out / "results.json").write_text({"cut-short": whole[:100], "a-list": "[1, 2]", "an-empty-object": "{}"}[damage])
    args = (
        ["rescore", str(out), "--output", str(tmp_path / "rescored")]
        if command == "rescore"
        else ["compare", str(out), str(out)]
    )
    refused = cli_here(*args)
    assert refused.returncode == 2, refused.stderr
    [line] = refused.stderr.splitlines()
    assert line.startswith("ragbench: error: ") and f"{out}/results.json" in line, line
    assert line.endswith(
        f"`ragbench ... --resume --output {out}` (the options it was run with) rebuilds it from the samples"
    ), line
    assert cli_here(*run_args(data, out, "--resume")).returncode == 0  # as the line says
    assert cli_here(*args).returncode == 0


def test_the_temporary_files_of_a_run_killed_while_replacing_a_file_go_with_its_resume(tmp_path):
    data = popqa(tmp_path, 3)
    out = tmp_path / "run"
    assert cli_here(*run_args(data, out)).returncode == 0
    stale = [
        out / ".results.json.0badf00d.tmp",
        out / "samples" / ".popqa.jsonl.deadbeef.tmp",
        out / "calls" / ".tools.json.12345678.tmp",
    ]  # what a kill -9 inside `replacing` leaves
    for path in stale:
        path.write_text("half written")
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, "finished": False}))
    assert cli_here(*run_args(data, out, "--resume")).returncode == 0
    assert not [path for path in stale if path.exists()]
