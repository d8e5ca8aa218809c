"""`cli_here` (tests/support/helpers.py, `ragbench.testing.cli_here`) is the subprocess `cli`'s twin: the same exit code and text for the same
command, and the process that ran it as it was before."""

from __future__ import annotations

import logging
import os
import re
import signal
import sys
import warnings

import pytest

import ragbench.testing
from support.helpers import cli, cli_here, samples

RUN = ("--tasks", "demo", "--system", "closed_book", "--model", "scripted:echo", "--limit", "3", "--no-progress")


def seen(done, folder) -> tuple:
    """The exit code and text, with the run folder, the run's speed and its calls' latency taken out."""
    return (
        done.returncode,
        *(
            re.sub(
                r"p50 [0-9.]+ s, p95 [0-9.]+ s",
                "p50 L, p95 L",
                re.sub(r"in [0-9.]+ s \([0-9.]+/s\)", "in T", text.replace(str(folder), "RUN")),
            )
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
        list(warnings.filters),
        warnings.showwarning,
    )
    done = cli_here(*RUN, "--output", str(tmp_path / "run"), env={"RAGBENCH_TEST_ONLY": "1"})
    assert done.returncode == 0 and "results:" in done.stdout
    assert (
        {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)},
        dict(os.environ),
        os.getcwd(),
        list(logging.getLogger().handlers),
        list(warnings.filters),
        warnings.showwarning,
    ) == before


WARNING_SCRIPT = """import warnings


def answer(request):
    warnings.warn("the script's warning", UserWarning)
    warnings.warn("the script's deprecation", DeprecationWarning)
    return "an answer"
"""


@pytest.mark.parametrize(
    "warning_options",
    ["", "always::UserWarning", "default", "ignore"],
    ids=["fresh-interpreter", "always", "default", "ignore"],
)
def test_warnings_reach_the_in_process_commands_stderr_as_the_subprocess_writes_them(
    tmp_path, monkeypatch, warning_options
):
    """A command whose model warns at each of 3 calls: shown once per location on stderr with a fresh interpreter's
    filters (the DeprecationWarning ignored), or as PYTHONWARNINGS says; the same text in both, twice in a row."""
    (tmp_path / "warning_script.py").write_text(WARNING_SCRIPT)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "warning_script", raising=False)  # another test's, from its own folder
    env = {"PYTHONWARNINGS": warning_options, "PYTHONPATH": str(tmp_path)}
    args = ("--tasks", "demo", "--system", "closed_book", "--model", "scripted:warning_script:answer")
    args += ("--limit", "3", "--no-progress", "--max-inflight", "1")
    there = cli(*args, "--output", str(tmp_path / "there"), env=env)
    assert ("the script's warning" in there.stderr) == (warning_options != "ignore")
    for again in ("here", "again"):
        here = cli_here(*args, "--output", str(tmp_path / again), env=env)
        assert seen(here, tmp_path / again) == seen(there, tmp_path / "there")


ENV_SCRIPT = """import os


def answer(request):
    return f"{os.environ.get('RAGBENCH_TEST_MARKER')} {os.environ.get('RAGBENCH_TEST_OUTSIDE')} {os.getcwd()}"
"""


def test_the_in_process_command_runs_with_the_environment_alone_and_in_the_folder_it_is_given(tmp_path, monkeypatch):
    """`ragbench.testing.cli_here(env_only=True, cwd=...)`, as the benchmarks' quick modes run their commands: the
    command sees `env` and nothing else of this process's environment, runs in `cwd` (a relative --output there),
    and leaves both as they were."""
    (tmp_path / "env_script.py").write_text(ENV_SCRIPT)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "env_script", raising=False)
    monkeypatch.setenv("RAGBENCH_TEST_OUTSIDE", "set")
    work = tmp_path / "work"
    work.mkdir()
    before = dict(os.environ), os.getcwd()
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "RAGBENCH_TEST_MARKER": "given"}
    args = ("--tasks", "demo", "--system", "closed_book", "--model", "scripted:env_script:answer", "--limit", "1")
    done = ragbench.testing.cli_here([*args, "--output", "run", "--no-progress"], env, env_only=True, cwd=work)
    assert done.returncode == 0, done.stderr
    (record,) = samples(work / "run", "demo")
    assert record["prediction"]["answer"] == f"given None {work}"
    assert (dict(os.environ), os.getcwd()) == before
