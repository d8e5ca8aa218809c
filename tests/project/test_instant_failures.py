"""A run of the suite on xdist workers names each failure when it happens, not only in the summary a killed run
never prints (tests/support/instant_failures.py)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, installed

pytestmark = pytest.mark.skipif(not installed("xdist"), reason="needs pytest-xdist")

TESTS = """
import os, time

def test_a_fails():
    assert 1 == 2, "one is not two"

def test_b_waits_to_be_killed():
    parent = os.getppid()
    while os.getppid() == parent:  # until the controller is gone (killed with its process group)
        time.sleep(0.05)
"""


def killed_after_first_failure(folder: Path, *options: str) -> str:
    """`pytest -q -n 1` of two tests, the first failing, the second waiting: the whole process group killed
    (SIGKILL: nothing more is printed) once the controller has shown the first test's `F`. What it printed."""
    (folder / "test_two.py").write_text(textwrap.dedent(TESTS), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests"), "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-n", "1", "-p", "no:randomly", "-p", "no:cacheprovider"]
    process = subprocess.Popen(
        [*command, *options, "test_two.py"],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    seen = b""
    while not re.search(rb"(?m)^[.sxE]*F(?!AILED)", seen):  # the progress line's `F`: the report has arrived
        chunk = process.stdout.read1(4096)
        assert chunk, f"pytest ended before its first failure: {seen.decode()}"
        seen += chunk
    os.killpg(process.pid, signal.SIGKILL)
    seen += process.stdout.read()
    process.wait()
    return seen.decode()


def test_a_failure_is_named_before_the_run_is_killed(tmp_path):
    output = killed_after_first_failure(tmp_path, "-p", "support.instant_failures")
    assert "FAILED test_two.py::test_a_fails - AssertionError: one is not two" in output
    assert "short test summary" not in output  # the summary never came: the line above is all there is


def test_a_run_without_the_plugin_names_nothing_when_killed(tmp_path):
    """What the plugin is for: the same run without it shows only the `F`."""
    output = killed_after_first_failure(tmp_path)
    assert "test_a_fails" not in output
