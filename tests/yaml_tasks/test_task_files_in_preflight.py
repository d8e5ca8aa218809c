"""A run's task files are read before its pre-flight, with the registry the run is given
(ragbench._run.plan.run_registry); one that does not read is said where the pre-flight looks it up, in the same
words and the same place among the other problems as when planning read it."""

from __future__ import annotations

import pytest

from ragbench.testing import PreflightError, run_eval

BROKEN = "task: t\ndata: {path: d.jsonl\n"  # line 3: the flow mapping never closes


def problems(tmp_path, *args, **options) -> list[str]:
    with pytest.raises(PreflightError) as refused:
        run_eval(*args, output=tmp_path / "run", **options)
    return refused.value.problems


def test_a_broken_task_file_is_said_after_the_runs_own_options_and_before_an_unknown_task(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text(BROKEN)
    said = problems(tmp_path, ["no_such_task", str(broken)], seed=-1)
    assert said[0] == "--seed -1: give at least 0"
    assert said[1].startswith(f"{broken}:3: not valid YAML")
    assert len(said) == 2  # the tasks are not resolved: nothing is said of them beyond the file


def test_data_keys_naming_task_files_that_do_not_register_are_said_in_their_order_before_the_system(tmp_path):
    clash, gone = tmp_path / "clash.yaml", tmp_path / "gone.yaml"
    clash.write_text("task: popqa\n")
    said = problems(tmp_path, "demo", "nosuch", data={str(clash): "x.jsonl", str(gone): "y.jsonl"})
    assert said == [
        f"{clash}: task 'popqa' is already provided by ragbench (ragbench.tasks.selfrag:popqa.yaml); "
        "give the file's task another name",
        f"--tasks {gone}: no such file",
        "unknown system 'nosuch' (`ragbench list systems` shows them all)",
    ]
