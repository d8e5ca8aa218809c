"""A console that fails (stdout or stderr on a full disk, `> /dev/full`; a reader gone, `| head -1`) ends a
command in one line and an exit code, never a traceback, and never stops its work: a run whose console
fails writes its whole run folder. The commands run as the console script does (`python -m ragbench`). A failing
stream's exit code over any writes, a unit: test_guarded_stream.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from support.helpers import cli_run_args, comparable, run

pytestmark = pytest.mark.timeout(120)
EXIT_CONSOLE = os.EX_IOERR  # 74: the work was done, the console could not be written (docs/running.md, "exit 74")
DEMO_RUN = [
    *cli_run_args("scripted:echo", system="vanilla"),
    "--limit",
    "6",
    "--no-progress",
    "--bootstrap-iters",
    "200",
]
FULL = (
    "ragbench: error: cannot write to {stream} (No space left on device: /dev/full); what went there from then "
    "on was dropped, its other work is done; free space there, or send it elsewhere"
)


def ragbench(*args: str, stdout=subprocess.PIPE, stderr=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragbench", *args], stdout=stdout, stderr=stderr, timeout=100)


def full_stdout(*args: str) -> subprocess.CompletedProcess:
    with open("/dev/full", "w") as full:
        return ragbench(*args, stdout=full)


def command(tmp_path: Path, name: str) -> list[str]:
    """The command `name`'s arguments (for `compare`, its two runs made first, in this process)."""
    if name == "compare":
        run(tmp_path, "a", tasks=["demo"], system="vanilla", model="scripted:echo", limit=6)
        run(tmp_path, "b", tasks=["demo"], system="closed_book", model="scripted:echo", limit=6)
    return {
        "version": ["--version"],
        "list": ["list"],
        "check": ["check", *DEMO_RUN, "--output", str(tmp_path / "c")],
        "compare": ["compare", str(tmp_path / "a"), str(tmp_path / "b")],
        "run": [*DEMO_RUN, "--output", str(tmp_path / "run")],
    }[name]


@pytest.mark.parametrize("name", ["version", "list", "check", "compare", "run"])
def test_a_command_whose_stdout_is_a_full_disk_ends_in_one_line_and_its_exit_code(tmp_path, name):
    ended = full_stdout(*command(tmp_path, name))
    assert ended.stderr.decode().splitlines() == [FULL.format(stream="stdout")]
    assert ended.returncode == EXIT_CONSOLE


def test_a_run_whose_console_is_a_full_disk_writes_its_whole_run_folder(tmp_path):
    expected = run(tmp_path, "in_process", tasks=["demo"], system="vanilla", model="scripted:echo", limit=6)
    with open("/dev/full", "w") as full:
        ended = ragbench(*DEMO_RUN, "--output", str(tmp_path / "run"), stdout=full, stderr=full)
    assert ended.returncode == EXIT_CONSOLE  # no line: stderr is full too
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert comparable(results) == comparable(expected)
    assert (tmp_path / "run" / "report.md").is_file()
    assert len((tmp_path / "run" / "samples" / "demo.jsonl").read_text().splitlines()) == 6


def test_a_run_whose_stderr_alone_is_a_full_disk_prints_its_summary_and_says_so_in_its_exit_code(tmp_path):
    with open("/dev/full", "w") as full:
        with_progress = [arg for arg in DEMO_RUN if arg != "--no-progress"]
        ended = ragbench(*with_progress, "--output", str(tmp_path / "run"), stderr=full)
    assert ended.returncode == EXIT_CONSOLE
    assert f"results: {tmp_path / 'run' / 'results.json'}" in ended.stdout.decode()
    assert json.loads((tmp_path / "run" / "results.json").read_text())["complete"]


def closed_pipe() -> int:
    """The writing end of a pipe whose reader has gone (every write fails with EPIPE)."""
    read, write = os.pipe()
    os.close(read)
    return write


@pytest.mark.parametrize("name", ["list", "run"])
def test_a_reader_that_went_away_ends_a_command_quietly_as_sigpipe_would(tmp_path, name):
    write = closed_pipe()
    try:
        ended = ragbench(*command(tmp_path, name), stdout=write)
    finally:
        os.close(write)
    assert ended.stderr == b""
    assert ended.returncode == 128 + signal.SIGPIPE
    if name == "run":
        assert json.loads((tmp_path / "run" / "results.json").read_text())["complete"]
