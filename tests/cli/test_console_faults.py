"""A console that fails (stdout or stderr on a full disk, `> /dev/full`; a reader gone, `| head -1`) ends a
command in one line and an exit code, never a traceback, and never stops its work: a run whose console
fails writes its whole run folder. The commands run as the console script does (`python -m ragbench`)."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._cli.console import GuardedStream, exit_code
from ragbench._errors import EXIT_CONSOLE, EXIT_INCOMPLETE
from support.helpers import cli_run_args, comparable, run

pytestmark = pytest.mark.timeout(120)
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


def commands(tmp_path: Path) -> dict[str, list[str]]:
    run(tmp_path, "a", tasks=["demo"], system="vanilla", model="scripted:echo", limit=6)
    run(tmp_path, "b", tasks=["demo"], system="closed_book", model="scripted:echo", limit=6)
    return {
        "version": ["--version"],
        "list": ["list"],
        "check": ["check", *DEMO_RUN, "--output", str(tmp_path / "c")],
        "compare": ["compare", str(tmp_path / "a"), str(tmp_path / "b")],
        "run": [*DEMO_RUN, "--output", str(tmp_path / "run")],
    }


@pytest.mark.parametrize("name", ["version", "list", "check", "compare", "run"])
def test_a_command_whose_stdout_is_a_full_disk_ends_in_one_line_and_its_exit_code(tmp_path, name):
    ended = full_stdout(*commands(tmp_path)[name])
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
        ended = ragbench(*commands(tmp_path)[name], stdout=write)
    finally:
        os.close(write)
    assert ended.stderr == b""
    assert ended.returncode == 128 + signal.SIGPIPE
    if name == "run":
        assert json.loads((tmp_path / "run" / "results.json").read_text())["complete"]


class Failing:
    """A console stream whose writes and flushes fail with `error` from the `after`-th call on."""

    def __init__(self, error: int, after: int) -> None:
        self.error, self.after, self.calls, self.written = error, after, 0, []
        self.encoding, self.errors = "utf-8", "strict"

    def _call(self) -> None:
        self.calls += 1
        if self.calls > self.after:
            raise OSError(self.error, os.strerror(self.error))

    def write(self, text: str) -> int:
        self._call()
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        self._call()


ERRNOS = st.sampled_from([errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EBADF, errno.EDQUOT, errno.EAGAIN])


@settings(max_examples=60, deadline=None)
@given(
    error=ERRNOS,
    after=st.integers(0, 6),
    writes=st.lists(st.text(max_size=5), max_size=8),
    command_code=st.sampled_from([0, None, EXIT_INCOMPLETE]),
)
def test_a_failing_stream_never_raises_and_the_exit_code_says_what_happened(error, after, writes, command_code):
    failing, stderr_inner = Failing(error, after), Failing(errno.ENOSPC, 10**6)
    stdout, stderr = GuardedStream(failing, "stdout"), GuardedStream(stderr_inner, "stderr")
    for text in writes:
        assert stdout.write(text) == len(text)
        stdout.flush()
    code = exit_code(command_code, [stdout, stderr])
    if stdout.failure is None:
        assert code == command_code and stderr_inner.written == []
    elif error == errno.EPIPE:
        assert code == (command_code or 128 + signal.SIGPIPE) and stderr_inner.written == []
    else:
        assert code == (command_code or EXIT_CONSOLE)
        [line] = "".join(stderr_inner.written).splitlines()
        assert line.startswith(f"ragbench: error: cannot write to stdout ({os.strerror(error)}")
        assert ("its other work is done" in line) == (not command_code)
