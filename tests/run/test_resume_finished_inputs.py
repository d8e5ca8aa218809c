"""--resume of a run marked finished: old results only while its inputs are those it ran on. A task's config
or a model's files that changed are refused, as for an unfinished run; data whose fingerprint changed is read
again and the records that changed run again."""

from __future__ import annotations

import json
import os

import pytest
from test_resume_data_changes import RECORDS, TASK, closed_book_run

from ragbench.api import ConfigError
from support.helpers import cli_here, cli_run_args


def write_task(folder, records, template=TASK, rules=({"response": "one"},)):
    (folder / "t.yaml").write_text(template)
    (folder / "data.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    (folder / "rules.json").write_text(json.dumps(list(rules)))


def run(folder, resume: bool = False):
    return closed_book_run(folder / "t.yaml", f"scripted:{folder / 'rules.json'}", folder / "run", resume)


def test_a_finished_run_whose_data_changed_reads_it_again_and_scores_the_records_it_holds_now(tmp_path, caplog):
    write_task(tmp_path, RECORDS)
    assert run(tmp_path).results["results"]["tq"]["em"] == 0.25  # "one" is right for q1 only
    write_task(tmp_path, [{**RECORDS[0], "golden_answers": ["uno"]}, *RECORDS[1:3]])  # q1 fixed, q4 gone
    resumed = run(tmp_path, resume=True)
    assert not resumed.already_finished and resumed.complete
    assert resumed.results["counts"]["tq"]["records"] == 3 and resumed.results["results"]["tq"]["em"] == 0.0
    assert resumed.results["cost"]["this_attempt"]["examples"] == 1  # q1 ran again; q2, q3 kept
    said = [r.getMessage() for r in caplog.records if "changed since it started" in r.getMessage()]
    assert said == [
        f"ragbench: {tmp_path / 'run'} is finished, but the data of task tq changed since it started: "
        "the data is read again and the records that changed run again"
    ]
    again = run(tmp_path, resume=True)  # the new fingerprint was recorded: finished, nothing read
    assert again.already_finished and again.results["results"]["tq"]["em"] == 0.0


def test_a_finished_run_whose_task_file_changed_is_refused_and_left_as_it_was(tmp_path):
    write_task(tmp_path, RECORDS)
    run(tmp_path)
    results = (tmp_path / "run" / "results.json").read_bytes()
    (tmp_path / "t.yaml").write_text(TASK.replace("Answer:", "Short answer:"))
    with pytest.raises(ConfigError, match=r"--resume: .*: a task changed since the run started \(tq: "):
        run(tmp_path, resume=True)
    assert (tmp_path / "run" / "results.json").read_bytes() == results


def test_a_finished_run_whose_model_files_changed_is_refused_in_one_line(tmp_path):
    write_task(tmp_path, RECORDS)
    args = [
        *cli_run_args(f"scripted:{tmp_path / 'rules.json'}", task=str(tmp_path / "t.yaml")),
        "--no-progress",
        "--bootstrap-iters",
        "0",
        "--output",
        str(tmp_path / "run"),
    ]
    assert cli_here(*args).returncode == 0
    (tmp_path / "rules.json").write_text(json.dumps([{"response": "two"}]))  # the same name, another model
    resumed = cli_here(*args, "--resume")
    assert resumed.returncode == 2 and resumed.stdout == "", resumed.stderr
    line = resumed.stderr.strip()
    assert "\n" not in line and "the files of a model changed since the run started (model: " in line


def test_a_finished_run_with_unchanged_inputs_returns_its_results_without_reading_the_data(tmp_path):
    write_task(tmp_path, RECORDS)
    first = run(tmp_path)
    os.utime(tmp_path / "t.yaml")  # a task file touched but not changed: its config is the same
    data = tmp_path / "data.jsonl"
    kept = os.stat(data)
    first_line, *others = data.read_text().splitlines(keepends=True)  # the records after the first changed, with
    data.write_text(first_line + "".join(line[::-1].strip() + "\n" for line in others))  # the size and time they had:
    os.utime(data, ns=(kept.st_atime_ns, kept.st_mtime_ns))  # were the data read, it would be refused or run again
    assert os.stat(data).st_size == kept.st_size
    again = run(tmp_path, resume=True)
    assert again.already_finished and again.results == first.results
