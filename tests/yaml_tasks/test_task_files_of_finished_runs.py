"""A run's YAML task files (`--tasks FILE.yaml`) are recorded in run.json (`task_files`), so that `ragbench rescore
RUN` and `ragbench --replay RUN`, which are not given the file again, score the task the run ran: from another
folder, from the folder the file moved to (`--include-path DIR`), and never with a file changed since (one line
saying so and how to point at the file as it was). A run.json written before the record is read as before."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from support.helpers import cli_here

TASK = "task: my_facts\ndata: {path: facts.jsonl}\nfields:\n  gold: {answers: a}\nprompt:\n  template: 'Q: {{ question }}'\nmetrics: [em]\n"
RECORDS = [{"id": "1", "question": "capital of France", "a": ["Paris"]}, {"id": "2", "question": "2+2", "a": ["4"]}]


@pytest.fixture
def finished(tmp_path, monkeypatch) -> Path:
    """A finished run of `--tasks my_facts.yaml` given relative to the folder it ran in (tmp_path/work); the
    tests then stand in tmp_path/elsewhere."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "my_facts.yaml").write_text(TASK)
    (work / "facts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    monkeypatch.chdir(work)
    run = tmp_path / "run"
    args = ["--tasks", "my_facts.yaml", "--system", "closed_book", "--model", "scripted:echo", "--no-progress"]
    done = cli_here(*args, "--output", str(run))
    assert done.returncode == 0, done.stderr
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    return run


def rescore(run: Path, *args: str):
    return cli_here("rescore", str(run), "--metrics", "+f1", "--no-progress", "--overwrite", *args)


def scores(folder: Path) -> dict:
    return json.loads((folder / "results.json").read_text())["results"]["my_facts"]


def test_rescore_and_replay_from_another_folder_find_the_task_file_the_run_read(finished, tmp_path):
    recorded = json.loads((finished / "run.json").read_text())["config"]["task_files"]
    assert recorded == {"my_facts.yaml": {"task": "my_facts", "path": str(tmp_path / "work" / "my_facts.yaml")}}
    done = rescore(finished)
    assert done.returncode == 0, done.stderr
    assert set(scores(tmp_path / "run__rescored")) >= {"em", "f1"}
    replayed = cli_here("--replay", str(finished), "--no-progress")
    assert replayed.returncode == 0, replayed.stderr
    assert scores(tmp_path / "run__replay") == scores(finished)


def test_a_task_file_changed_or_moved_since_the_run_is_said_in_one_line_and_found_in_include_path(finished, tmp_path):
    work = tmp_path / "work"
    moved = tmp_path / "moved"
    shutil.copytree(work, moved)
    (work / "my_facts.yaml").write_text(TASK.replace("metrics: [em]", "metrics: [f1]"))
    changed = rescore(finished)
    assert changed.returncode == 2
    assert changed.stderr.splitlines() == [
        f"ragbench: error: rescore: task 'my_facts' was read from {work / 'my_facts.yaml'}, which changed since "
        f"(sha256 {recorded_sha256(finished)[:12]} then, {sha256_now(work / 'my_facts.yaml')[:12]} now): it is not "
        "the task the run ran; put the file back as it was, or give the folder that holds it as it was with "
        "--include-path DIR"
    ]
    (work / "my_facts.yaml").unlink()
    gone = cli_here("--replay", str(finished), "--no-progress")
    assert gone.returncode == 2
    assert gone.stderr.splitlines() == [
        f"ragbench: error: --replay {finished}: task 'my_facts' was read from {work / 'my_facts.yaml'}, which is "
        "not there now: give the folder that holds it as it was with --include-path DIR"
    ]
    assert rescore(finished, "--include-path", str(moved)).returncode == 0
    replayed = cli_here("--replay", str(finished), "--include-path", str(moved), "--no-progress")
    assert replayed.returncode == 0, replayed.stderr
    assert scores(tmp_path / "run__replay") == scores(finished)


def test_a_run_json_without_task_files_is_rescored_as_before(finished, tmp_path):
    record = json.loads((finished / "run.json").read_text())
    del record["config"]["task_files"]  # as a ragbench before the record wrote it
    (finished / "run.json").write_text(json.dumps(record))
    assert "unknown task 'my_facts'" in rescore(finished).stderr  # nothing says where its file is
    assert rescore(finished, "--include-path", str(tmp_path / "work")).returncode == 0  # as a run's --include-path


def recorded_sha256(run: Path) -> str:
    return json.loads((run / "run.json").read_text())["config"]["task_configs"]["my_facts"]["yaml_sha256"]


def sha256_now(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
