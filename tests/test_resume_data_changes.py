"""--resume after the task's data or YAML file changed: never saved samples of the old data mixed with new ones."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import samples, stopped_resume_after_the_data_changed

from ragbench._engines.base import EngineError
from ragbench._errors import ConfigError
from ragbench._registry import installed_registry
from ragbench._run.evaluator import Evaluator, RunConfig

DEMO = Path(__file__).resolve().parents[1] / "tasks" / "selfrag" / "data" / "demo_qa.jsonl"

TASK = """task: tq
data:
  path: data.jsonl
  format: flashrag
prompt:
  template: |-
    Question: {{ question }}
    Answer:
metrics: [em]
"""
RECORDS = [{"id": f"q{i}", "question": f"What is {word}?", "golden_answers": [word]}
           for i, word in enumerate(["one", "two", "three", "four"], 1)]


def write_task(folder, records, template=TASK):
    (folder / "t.yaml").write_text(template)
    (folder / "data.jsonl").write_text("".join(line if isinstance(line, str) else json.dumps(line) + "\n"
                                               for line in records))


SERVER_DOWN = [False]  # while set, the model fails on q4 (a transient fault: the model itself is unchanged)


def answer(request) -> str:
    if SERVER_DOWN[0] and "four" in request.prompt:
        raise EngineError("HTTP 503")
    return "one"


def run(folder, answer_all: bool, resume: bool = False):
    """The scripted model answers "one" to every question, or (not `answer_all`) fails on q4, leaving the run to resume."""
    SERVER_DOWN[0] = not answer_all
    return Evaluator(RunConfig(tasks=[str(folder / "t.yaml")], system="closed_book",
                               model=f"scripted:{__name__}:answer", output=str(folder / "run"), resume=resume,
                               progress=False, bootstrap_iters=0), registry=installed_registry()).run()


def test_a_saved_example_whose_record_changed_is_run_again_against_the_new_record(tmp_path):
    write_task(tmp_path, RECORDS)
    first = run(tmp_path, answer_all=False)
    assert first.results["results"]["tq"]["em"] == pytest.approx(1 / 3)  # q1 of q1-q3 right, q4 failed
    write_task(tmp_path, [{**RECORDS[0], "golden_answers": ["uno"]}, *RECORDS[1:]])
    resumed = run(tmp_path, answer_all=True, resume=True)
    assert resumed.complete and resumed.results["counts"]["tq"]["records"] == 4
    assert resumed.results["results"]["tq"]["em"] == 0.0  # q1 scored against the gold the data holds now
    assert [s["gold"]["answers"] for s in samples(tmp_path / "run", "tq")] == [["uno"], ["two"], ["three"], ["four"]]


def test_a_bad_record_fixed_in_the_data_leaves_no_old_bad_record_behind(tmp_path):
    cut = json.dumps(RECORDS[2])[:-1] + "\n"
    write_task(tmp_path, [*RECORDS[:2], cut, RECORDS[3]])
    assert run(tmp_path, answer_all=False).results["counts"]["tq"]["bad_records"] == 1
    write_task(tmp_path, RECORDS)
    resumed = run(tmp_path, answer_all=True, resume=True)
    assert resumed.results["counts"]["tq"] == {"records": 4, "scored": 4, "failed": 0, "bad_records": 0,
                                                "missing": 0, "metric_failures": 0}
    assert resumed.complete
    assert [s["id"] for s in samples(tmp_path / "run", "tq")] == ["q1", "q2", "q3", "q4"]


def test_the_sample_of_an_example_the_data_no_longer_holds_is_dropped(tmp_path):
    write_task(tmp_path, RECORDS)
    run(tmp_path, answer_all=False)
    write_task(tmp_path, [RECORDS[1], RECORDS[3]])  # q1 (right) and q3 gone
    resumed = run(tmp_path, answer_all=True, resume=True)
    assert [s["id"] for s in samples(tmp_path / "run", "tq")] == ["q2", "q4"]
    assert resumed.results["counts"]["tq"]["records"] == 2 and resumed.results["results"]["tq"]["em"] == 0.0


def test_resume_after_the_yaml_task_changed_is_refused_naming_what_changed(tmp_path):
    write_task(tmp_path, RECORDS)
    run(tmp_path, answer_all=False)
    before = (tmp_path / "run" / "samples" / "tq.jsonl").read_text()
    write_task(tmp_path, RECORDS, TASK.replace("Answer:", "Reply:"))
    with pytest.raises(ConfigError, match=r"a task changed since the run started \(tq: yaml_sha256: .*--overwrite"):
        run(tmp_path, answer_all=True, resume=True)
    assert (tmp_path / "run" / "samples" / "tq.jsonl").read_text() == before


def test_a_resume_stopped_after_the_data_changed_counts_only_samples_of_the_current_records_as_saved(tmp_path):
    """The samples of records that changed are not saved examples: they run again."""
    folder, said = stopped_resume_after_the_data_changed(tmp_path, DEMO)
    remade = len((folder / "samples" / "demo.jsonl").read_text().splitlines()) - 24
    assert remade >= 3
    assert f": {remade} of 24 examples saved in {folder}" in said, said
