"""report.md and the console summary of a fixed run, byte for byte: every section a run can have (failures with
tracebacks, a system's input problems, folded calls, cut outputs, counted events, format warnings, checkpoint
repairs, system statistics, a rescoring, an incomplete run) read from tests/data/report/results.json and
rendered from the typed `Results` as the run's end and the CLI render it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragbench._cli.outcomes import report_outcome
from ragbench._reports.results.file import read_results
from ragbench._reports.run_end import finish_run
from ragbench._run.evaluator import RunOutcome
from ragbench._storage.rundir import RunDir
from support import paths

FIXED = paths.DATA / "report"


def test_report_md_of_a_fixed_run_is_byte_identical(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_bytes((FIXED / "run.json").read_bytes())  # the run's start, as finish_run needs
    finish_run(RunDir(tmp_path), read_results(FIXED / "results.json", "test"))
    assert (tmp_path / "report.md").read_bytes() == (FIXED / "report.md").read_bytes()


def test_console_summary_of_a_fixed_run_is_byte_identical(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    outcome = RunOutcome(typed_results=read_results(FIXED / "results.json", "test"), run_dir=Path("runs/fixed"))
    with pytest.raises(SystemExit) as exited:
        report_outcome(outcome)
    assert exited.value.code == 1  # the fixed run is incomplete
    printed = capsys.readouterr()
    assert printed.out == (FIXED / "console.out").read_text()
    assert printed.err == (FIXED / "console.err").read_text()
