"""A run's task files are read before its pre-flight, with the registry the run is given
(ragbench._run.plan.planning.run_registry); one that does not read is said where the pre-flight looks it up, in the same
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


def test_a_data_key_naming_another_file_of_a_task_files_task_is_refused_as_two_task_files_are(tmp_path):
    """`--tasks a.yaml --data b.yaml=other.jsonl`, both files declaring task `t`: b.yaml's data was run with a.yaml's
    task (its metrics, its fields) and nothing said; `--tasks a.yaml,b.yaml` is refused, and so is this."""
    (tmp_path / "d.jsonl").write_text('{"id": "a", "question": "Q?", "answer": "x"}\n')
    (tmp_path / "other.jsonl").write_text('{"id": "c", "question": "Other?", "answer": "z"}\n')
    first, second = tmp_path / "a b é.yaml", tmp_path / "b.yaml"
    first.write_text("task: t\ndata: {path: d.jsonl}\nfields: {gold: {answers: answer}}\nmetrics: [em]\n")
    second.write_text("task: t\ndata: {path: other.jsonl}\nfields: {gold: {answers: answer}}\nmetrics: [f1]\n")
    said = problems(
        tmp_path,
        str(first),
        data={str(second): str(tmp_path / "other.jsonl")},
        model="scripted:echo",
        system="closed_book",
    )
    assert said == [f"--data {second}=...: declares task 't', as {first} does; give one of them another `task:` name"]
    link = tmp_path / "link.yaml"
    link.symlink_to(first)  # the same file by another name: its own data, as before
    done = run_eval(str(first), data={str(link): str(tmp_path / "other.jsonl")}, model="scripted:echo",
                    system="closed_book", output=tmp_path / "linked")  # fmt: skip
    assert done.results["counts"]["t"]["records"] == 1
    done = run_eval(str(first), data={"t": str(tmp_path / "other.jsonl")}, model="scripted:echo",
                    system="closed_book", output=tmp_path / "named")  # fmt: skip
    assert done.results["counts"]["t"]["records"] == 1  # keyed by the task's name: its data
