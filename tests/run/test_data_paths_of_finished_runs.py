"""A run's `--data KEY=PATH` given relative to the folder it ran in is recorded resolved in run.json
(`data_paths`), so that `ragbench --replay RUN` and `ragbench rescore RUN`, started from another folder, read the
data the run read (the relative path named another file there, or none: "no such file"); a data file gone or
changed since (its fingerprint, run.json's `data`) is refused by --replay in one line, and rescore (which scores
the recorded predictions) goes on without it. A run.json written before the record is read as before."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from support.helpers import cli_here

DEMO = Path(__file__).parents[2] / "tasks" / "selfrag" / "data" / "demo_qa.jsonl"
RECORDS = DEMO.read_text().splitlines(keepends=True)[:3]  # three of the demo task's records


@pytest.fixture
def finished(tmp_path, monkeypatch) -> Path:
    """A finished run of the demo task on `--data demo=data/qa.jsonl`, relative to the folder it ran in
    (tmp_path/work); the tests then stand in tmp_path/elsewhere."""
    data = tmp_path / "work" / "data"
    data.mkdir(parents=True)
    (data / "qa.jsonl").write_text("".join(RECORDS))
    monkeypatch.chdir(tmp_path / "work")
    run = tmp_path / "run"
    args = ["--tasks", "demo", "--data", "demo=data/qa.jsonl", "--system", "closed_book", "--model", "scripted:echo"]
    done = cli_here(*args, "--no-progress", "--output", str(run))
    assert done.returncode == 0, done.stderr
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    return run


def replay(run: Path, output: Path):
    return cli_here("--replay", str(run), "--output", str(output), "--no-progress")


def test_a_replay_from_another_folder_reads_the_data_the_run_read(finished, tmp_path):
    config = json.loads((finished / "run.json").read_text())["config"]
    assert config["data"] == {"demo": "data/qa.jsonl"}  # as given: the run's identity is unchanged
    assert config["data_paths"] == {"demo": str(tmp_path / "work" / "data" / "qa.jsonl")}
    done = replay(finished, tmp_path / "replayed")
    assert done.returncode == 0, done.stderr
    replayed = json.loads((tmp_path / "replayed" / "results.json").read_text())
    assert replayed["counts"]["demo"]["records"] == len(RECORDS)
    rescored = cli_here("rescore", str(finished), "--metrics", "+f1", "--no-progress")
    assert rescored.returncode == 0, rescored.stderr


@pytest.mark.parametrize("fault", ["moved", "changed"])
def test_a_data_file_moved_or_changed_since_the_run_is_refused_by_a_replay_and_not_by_a_rescore(
    finished, tmp_path, fault
):
    data = tmp_path / "work" / "data" / "qa.jsonl"
    if fault == "moved":
        shutil.move(data, tmp_path / "qa.jsonl")
        what = "which is not there now: put it back"
    else:
        data.write_text(
            data.read_text() + data.read_text().splitlines(keepends=True)[0].replace('"id": 9000', '"id": 1')
        )
        what = "which changed since (its size or modification time): it is not the data the run ran on"
    done = replay(finished, tmp_path / "replayed")
    assert done.returncode == 2, done.stdout
    (line,) = done.stderr.strip().splitlines()
    assert f"--replay {finished}: the run read --data demo=data/qa.jsonl from {data}, {what}" in line
    rescored = cli_here("rescore", str(finished), "--metrics", "+f1", "--no-progress")  # the run folder alone
    assert rescored.returncode == 0, rescored.stderr
    assert json.loads((finished / "results.json").read_text())["results"]["demo"]["f1"] is not None


def test_a_run_json_without_the_record_reads_its_data_paths_as_given(finished, tmp_path):
    for name in ("run.json", "results.json"):
        recorded = json.loads((finished / name).read_text())
        del recorded["config"]["data_paths"]
        (finished / name).write_text(json.dumps(recorded))
    done = replay(finished, tmp_path / "replayed")
    assert done.returncode == 2 and "--data demo=data/qa.jsonl: no such file or folder" in done.stderr
    os.chdir(tmp_path / "work")  # from the run's own folder, as before
    assert replay(finished, tmp_path / "replayed").returncode == 0
