"""Something other than a file (a FIFO, a device, a socket, a folder) where ragbench reads or appends to a file
of a run folder (samples, results.json, run.json, calls) is refused in one line naming it and the fix, never
opened for a blocking read: a FIFO waits for a writer without end, /dev/zero never ends. Each test has a
timeout, so a regression fails instead of hanging. Once the thing is removed, `--resume` completes."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from ragbench.testing import run_eval
from support.helpers import cli_here, cli_run_args

pytestmark = pytest.mark.timeout(60, method="thread")  # a hang in any thread fails the session
DEMO = {"task": "demo", "system": "vanilla", "model": "scripted:echo", "limit": 4, "bootstrap_iters": 200}
DEMO_ARGS = [
    *cli_run_args("scripted:echo", system="vanilla"),
    "--limit",
    "4",
    "--no-progress",
    "--bootstrap-iters",
    "200",
]


def put(kind: str, path: Path) -> str:
    """Something of `kind` at `path`, in place of what is there; what a refusal calls it."""
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
        return "a FIFO (named pipe)"
    if kind == "device":  # /dev/zero's node: a read never ends
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))
        return "a character device"
    if kind == "socket":
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(path))
        listener.close()
        return "a socket"
    path.mkdir()
    return "a folder"


def run(tmp_path: Path, **options) -> dict:
    return run_eval(**DEMO, output=tmp_path / "run", **options).results


def finished_run(tmp_path: Path) -> tuple[Path, dict]:
    results = run(tmp_path)
    return tmp_path / "run", results


@pytest.mark.parametrize("name", ["samples/demo.jsonl", "results.json"])
@pytest.mark.parametrize("kind", ["fifo", "device", "socket", "folder"])
def test_a_resume_meeting_something_else_than_its_file_is_refused_and_completes_once_it_is_removed(
    tmp_path, name, kind
):
    run_dir, first = finished_run(tmp_path)
    what = put(kind, run_dir / name)
    with pytest.raises(OSError) as refused:
        run(tmp_path, resume=True)
    assert type(refused.value).__name__ == "NotAFileError"  # what `ragbench` turns into its one line
    assert (refused.value.strerror, refused.value.filename) == (f"{what} is there, not a file", str(run_dir / name))
    (run_dir / name).rmdir() if kind == "folder" else (run_dir / name).unlink()
    resumed = run(tmp_path, resume=True)
    assert resumed["complete"] and resumed["results"] == first["results"]


def test_the_console_line_of_a_fifo_in_a_run_folder_names_it_and_the_fix(tmp_path):
    run_dir, _ = finished_run(tmp_path)
    put("fifo", run_dir / "samples" / "demo.jsonl")
    ended = cli_here(*DEMO_ARGS, "--output", str(run_dir), "--resume")
    assert ended.returncode == 1
    assert ended.stderr.splitlines()[-1] == (
        f"ragbench: error: a FIFO (named pipe) is there, not a file: {run_dir / 'samples' / 'demo.jsonl'}; remove it, "
        "or put the file there, then run the same command with --resume (what finished is saved)"
    )


@pytest.mark.parametrize(
    "command, name",
    [
        (["view", "{run}", "--export", "{out}"], "run.json"),
        (["view", "{run}", "--export", "{out}"], "results.json"),
        (["compare", "{run}", "{run}"], "results.json"),
        (["compare", "{run}", "{run}"], "samples/demo.jsonl"),
        (["rescore", "{run}", "--output", "{out}"], "samples/demo.jsonl"),
    ],
)
def test_commands_reading_a_run_folder_refuse_a_fifo_in_one_line(tmp_path, command, name):
    run_dir, _ = finished_run(tmp_path)
    put("fifo", run_dir / name)
    ended = cli_here(*[arg.format(run=run_dir, out=tmp_path / "out") for arg in command])
    assert ended.returncode == 1 and "Traceback" not in ended.stderr
    [line] = ended.stderr.splitlines()
    assert line.startswith(f"ragbench: error: a FIFO (named pipe) is there, not a file: {run_dir / name}; remove it")


@pytest.mark.parametrize("name", ["samples/demo.jsonl", "run.json"])
def test_the_viewer_refuses_a_run_whose_files_are_fifos(tmp_path, name):
    run_dir, _ = finished_run(tmp_path)
    put("fifo", run_dir / name)
    ended = cli_here("view", str(run_dir), "--export", str(tmp_path / "site"))
    assert ended.returncode == 1 and "Traceback" not in ended.stderr
    [line] = ended.stderr.splitlines()
    assert line.startswith(f"ragbench: error: a FIFO (named pipe) is there, not a file: {run_dir / name}; remove it")
