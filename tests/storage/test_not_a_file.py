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

from ragbench._storage.files import NotAFileError, file_there, open_file
from support.helpers import cli_here, cli_run_args, run

pytestmark = pytest.mark.timeout(60, method="thread")  # a hang in any thread fails the session
DEMO = {"tasks": ["demo"], "system": "vanilla", "model": "scripted:echo", "limit": 4}
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


@pytest.mark.parametrize("kind", ["fifo", "device", "socket", "folder"])
@pytest.mark.parametrize("mode", ["rb", "r", "a"])
def test_opening_anything_but_a_file_is_refused_without_blocking(tmp_path, kind, mode):
    what = put(kind, tmp_path / "thing")
    with pytest.raises(NotAFileError) as refused:
        open_file(tmp_path / "thing", mode)
    assert (refused.value.strerror, refused.value.filename) == (f"{what} is there, not a file", str(tmp_path / "thing"))
    with pytest.raises(NotAFileError):
        file_there(tmp_path / "thing")
    assert not file_there(tmp_path / "nothing") and not file_there(tmp_path / "nothing" / "below")


def finished_run(tmp_path: Path) -> tuple[Path, dict]:
    results = run(tmp_path, "run", **DEMO)
    return tmp_path / "run", results


@pytest.mark.parametrize("name", ["samples/demo.jsonl", "results.json"])
@pytest.mark.parametrize("kind", ["fifo", "device", "socket", "folder"])
def test_a_resume_meeting_something_else_than_its_file_is_refused_and_completes_once_it_is_removed(
    tmp_path, name, kind
):
    run_dir, first = finished_run(tmp_path)
    put(kind, run_dir / name)
    with pytest.raises(NotAFileError) as refused:
        run(tmp_path, "run", resume=True, **DEMO)
    assert refused.value.filename == str(run_dir / name)
    (run_dir / name).rmdir() if kind == "folder" else (run_dir / name).unlink()
    resumed = run(tmp_path, "run", resume=True, **DEMO)
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


def test_the_viewer_refuses_a_run_whose_files_are_fifos(tmp_path):
    from ragbench._view.runs import RunFolder

    run_dir, _ = finished_run(tmp_path)
    put("fifo", run_dir / "samples" / "demo.jsonl")
    with pytest.raises(NotAFileError):
        RunFolder(run_dir, "r").samples("demo")
    put("fifo", run_dir / "run.json")
    with pytest.raises(NotAFileError):
        assert RunFolder(run_dir, "r").record is None  # never reached
