"""`cli_here` (tests/helpers.py) is the subprocess `cli`'s twin: the same exit code and text for the same
command, and the process that ran it as it was before."""

from __future__ import annotations

import logging
import os
import re
import signal

import pytest

from helpers import cli, cli_here

RUN = ("--tasks", "demo", "--system", "closed_book", "--model", "scripted:echo", "--limit", "3", "--no-progress")


def seen(done, folder) -> tuple:
    """The exit code and text, with the run folder and the run's speed taken out."""
    return (
        done.returncode,
        *(
            re.sub(r"in [0-9.]+ s \([0-9.]+/s\)", "in T", text.replace(str(folder), "RUN"))
            for text in (done.stdout, done.stderr)
        ),
    )


@pytest.mark.parametrize(
    "args",
    [("--output", "{out}"), ("--output", "{out}", "--limit", "0"), ("--output", "{out}", "--bogus")],
    ids=["run", "config-error", "usage-error"],
)
def test_the_in_process_command_exits_and_prints_as_the_subprocess(tmp_path, args):
    there = cli(*RUN, *(arg.format(out=tmp_path / "there") for arg in args))
    here = cli_here(*RUN, *(arg.format(out=tmp_path / "here") for arg in args))
    assert seen(here, tmp_path / "here") == seen(there, tmp_path / "there")


def test_the_in_process_command_leaves_the_process_as_it_was(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = (
        {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)},
        dict(os.environ),
        os.getcwd(),
        list(logging.getLogger().handlers),
    )
    done = cli_here(*RUN, "--output", str(tmp_path / "run"), env={"RAGBENCH_TEST_ONLY": "1"})
    assert done.returncode == 0 and "results:" in done.stdout
    assert (
        {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)},
        dict(os.environ),
        os.getcwd(),
        list(logging.getLogger().handlers),
    ) == before
