"""A machine short of open files, threads or memory (real limits, set with setrlimit in the child): the run
ends in one line naming what ran out and the fix, exit 1, never a traceback, an "Exception ignored" at exit or
a hang; `--resume` with the limit raised finishes it."""

from __future__ import annotations

import gzip
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from support.command_zygote import Zygote
from support.helpers import cli_run_args

GB = 2**30


def demo_args(folder: Path, *more: str) -> list[str]:
    return [*cli_run_args("scripted:echo"), "--no-progress", "--output", str(folder), *more]


def run(folder: Path, *more: str, limits: dict[int, int]) -> subprocess.CompletedProcess:
    """The demo run in `folder`, a fresh interpreter under `limits` (resource -> soft and hard limit: the
    imports are made under them too). The timeout is only the safety net of a command that would hang: no
    assertion depends on it."""

    def limited() -> None:
        for kind, value in limits.items():
            resource.setrlimit(kind, (value, value))

    return subprocess.run(
        [sys.executable, "-m", "ragbench._cli.main", *demo_args(folder, *more)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )  # numpy's import starts no threads


def unlimited(zygote: Zygote, folder: Path, *more: str) -> subprocess.CompletedProcess:
    """The demo run in `folder` with the limits raised again (the resume): a fork of the tests' command zygote."""
    return zygote.run(demo_args(folder, *more), dict(os.environ), timeout=120)


def assert_one_line(result: subprocess.CompletedProcess, problem: str) -> None:
    """Exit 1, the last line names the problem and the fix; no traceback, nothing reported at exit."""
    assert result.returncode == 1, result.stderr[-3000:]
    lines = result.stderr.strip().splitlines()
    assert lines and lines[-1].startswith(f"ragbench: error: {problem}"), result.stderr[-3000:]
    assert all(line.startswith("ragbench: ") for line in lines), result.stderr[-3000:]  # a warning at most before


@pytest.mark.parametrize("files", [6, 10, 12])
def test_too_many_open_files_is_one_line_naming_the_limit_and_resume_finishes(tmp_path, files, ragbench_zygote):
    limited = run(tmp_path / "run", limits={resource.RLIMIT_NOFILE: files})
    if files > 6 and limited.returncode == 0:  # a run that needs fewer files than this machine's did
        return
    assert_one_line(limited, f"too many open files (the limit is {files}); raise it (ulimit -n")
    assert "Exception ignored" not in limited.stderr
    again = ["--resume"] if (tmp_path / "run" / "run.json").is_file() else []
    resumed = unlimited(ragbench_zygote, tmp_path / "run", *again)
    assert resumed.returncode == 0, resumed.stderr


def test_no_thread_can_start_is_one_line_not_a_traceback_and_a_hang(tmp_path, ragbench_zygote):
    # every new thread's stack (ulimit -s, 2 GB) is more than the memory left (ulimit -v, 3 GB): the first fails
    limited = run(tmp_path / "run", limits={resource.RLIMIT_STACK: 2 * GB, resource.RLIMIT_AS: 3 * GB})
    assert_one_line(limited, "cannot start a thread (out of memory or of threads); free memory, or raise the limits")
    assert unlimited(ragbench_zygote, tmp_path / "run", "--resume").returncode == 0


def test_out_of_memory_is_one_line(tmp_path):
    data = tmp_path / "huge.jsonl.gz"  # one line of 1 GB (1 MB compressed), more than the 1 GB allowed
    sixteen_mb = gzip.compress(b"a" * 2**24, mtime=0)  # compressed once: a gzip file of 66 members reads as one text
    data.write_bytes(
        gzip.compress(b'{"question": "', mtime=0) + sixteen_mb * 64 + gzip.compress(b'", "answers": ["x"]}\n', mtime=0)
    )
    limited = run(tmp_path / "run", "--data", f"demo={data}", limits={resource.RLIMIT_AS: GB})
    assert_one_line(limited, "out of memory; free memory, or raise the memory limit (ulimit -v")


@pytest.mark.parametrize("megabytes", [300, 360, 400])
def test_an_import_that_cannot_map_its_library_is_out_of_memory_in_one_line(tmp_path, megabytes, ragbench_zygote):
    """Under these limits numpy's import (made as the run's results are assembled) fails in the dynamic loader
    ("failed to map segment from shared object": an ImportError, issue 78) or another allocation does: either
    is one line saying out of memory (small thread stacks: the threads start), and `--resume` finishes the run."""
    limits = {resource.RLIMIT_AS: megabytes * 1000 * 1024, resource.RLIMIT_STACK: 2**20}
    limited = run(tmp_path / "run", "--system", "vanilla", limits=limits)
    if limited.returncode == 0:  # a machine whose run fits in this much
        return
    assert_one_line(limited, "out of memory; free memory, or raise the memory limit (ulimit -v")
    assert "Traceback" not in limited.stderr
    again = ["--resume"] if (tmp_path / "run" / "run.json").is_file() else []
    resumed = unlimited(ragbench_zygote, tmp_path / "run", "--system", "vanilla", *again)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
