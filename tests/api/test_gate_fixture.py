"""The pytest fixture `ragbench_gate` (ragbench.testing.fixtures, loaded by a suite's conftest.py) in a test suite of
its own, run by pytest in a fresh process on run folders made by real (scripted) runs: a candidate equal to its
baseline passes and the gate's report is returned; a candidate significantly worse fails its test with the gate's
verdict line and table."""

from __future__ import annotations

import subprocess
import sys

from support.gate_runs import demo_gate_run

SUITE = """
from ragbench.testing import gate_runs


def test_the_same_system_passes(ragbench_gate):
    report = ragbench_gate({same!r}, {base!r}, metrics=["em", "f1"])
    assert not report.regressions and report.tested == 3 and not report.family


def test_the_worse_system(ragbench_gate):
    ragbench_gate({worse!r}, {base!r}, thresholds={{"em": 0.02}})


def test_the_report_alone():
    assert [row.metric for row in gate_runs({worse!r}, {base!r}).regressions] == ["match", "match_normalized", "em", "f1"]
"""


def test_the_fixture_passes_an_equal_run_and_fails_a_worse_one_naming_the_regressions(tmp_path):
    runs = {
        name: str(demo_gate_run(tmp_path, name, right=right))
        for name, right in (("base", range(24)), ("same", range(24)), ("worse", range(6)))
    }
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text('pytest_plugins = ["ragbench.testing.fixtures"]\n')
    (suite / "test_app.py").write_text(SUITE.format(**runs))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(suite)],
        capture_output=True,
        text=True,
        cwd=suite,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 2 passed" in done.stdout
    assert (
        "AssertionError: ragbench: gate FAIL: 4 significant regression(s) of 5 key(s) tested (Holm over the 4 on"
        in done.stdout
    )
    assert "| demo | em | higher | 24 | 1.0000 | 0.2500 | -0.7500" in done.stdout
    assert "**FAIL** (allowed 0.02) |" in done.stdout
