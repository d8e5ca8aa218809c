"""--resume after the task's data or YAML file changed: never saved samples of the old data mixed with new ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragbench.api import ConfigError, EngineError
from ragbench.testing import EvalResult, Registry, run_eval
from support import paths
from support.helpers import comparable, samples, stopped_resume_after_the_data_changed, task_counts

DEMO = paths.REPO / "tasks" / "selfrag" / "data" / "demo_qa.jsonl"

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
RECORDS = [
    {"id": f"q{i}", "question": f"What is {word}?", "golden_answers": [word]}
    for i, word in enumerate(["one", "two", "three", "four"], 1)
]


def write_task(folder, records, template=TASK):
    (folder / "t.yaml").write_text(template)
    (folder / "data.jsonl").write_text(
        "".join(line if isinstance(line, str) else json.dumps(line) + "\n" for line in records)
    )


SERVER_DOWN = [False]  # while set, the model fails on q4 (a transient fault: the model itself is unchanged)


def answer(request) -> str:
    if SERVER_DOWN[0] and "four" in request.prompt:
        raise EngineError("HTTP 503")
    return "one"


def closed_book_run(
    task: Path, model: str, output: Path, resume: bool = False, registry: Registry | None = None, **config
) -> EvalResult:
    """A closed-book run of the task file `task` on `model` into `output`, in-process, with no bootstrap
    (`config`: more of the run's options)."""
    return run_eval(
        str(task), "closed_book", model, output=output, resume=resume, bootstrap_iters=0, registry=registry, **config
    )


def run(folder, answer_all: bool, resume: bool = False):
    """The scripted model answers "one" to every question, or (not `answer_all`) fails on q4, leaving the run to resume."""
    SERVER_DOWN[0] = not answer_all
    return closed_book_run(folder / "t.yaml", f"scripted:{__name__}:answer", folder / "run", resume)


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
    assert resumed.results["counts"]["tq"] == task_counts(4, 4)
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


def fresh_run(folder, records):
    """A run of `records` from scratch, in a folder of its own, for a resumed run to equal."""
    folder.mkdir()
    write_task(folder, records)
    return run(folder, answer_all=True)


def test_an_id_that_reads_as_a_bad_records_key_is_neither_it_nor_a_crash_on_resume(tmp_path):
    cut = json.dumps(RECORDS[0])[:-1] + "\n"  # record 2 (0-based) is bad
    odd = [{**RECORDS[0], "id": "#record-2"}, {**RECORDS[1], "id": "bad record 2"}, cut, RECORDS[3]]
    write_task(tmp_path, odd)
    first = run(tmp_path, answer_all=False)  # q4 fails: a run to resume
    assert first.results["counts"]["tq"] == task_counts(4, 2, failed=1, bad_records=1)
    resumed = run(tmp_path, answer_all=True, resume=True)
    assert resumed.results["counts"]["tq"] == task_counts(4, 3, bad_records=1)
    assert resumed.results["cost"]["this_attempt"]["examples"] == 1  # q4 alone ran again
    assert [s["id"] for s in samples(tmp_path / "run", "tq")] == ["#record-2", "bad record 2", None, "q4"]


@pytest.mark.parametrize("finished", [True, False], ids=["finished", "unfinished"])
def test_a_resume_after_records_moved_changed_came_and_went_ends_as_a_fresh_run_of_the_data(tmp_path, finished):
    write_task(tmp_path, RECORDS)
    run(tmp_path, answer_all=finished)
    now = [
        {"id": "q5", "question": "What is five?", "golden_answers": ["five"]},
        RECORDS[3],
        {**RECORDS[2], "golden_answers": ["one"]},
        RECORDS[0],
    ]  # q2 gone, q3 changed, q1 and q4 swapped
    write_task(tmp_path, now)
    resumed = run(tmp_path, answer_all=True, resume=True).results
    fresh = fresh_run(tmp_path / "fresh", now).results
    assert resumed["data_sha256"] == fresh["data_sha256"]
    assert comparable(resumed) == comparable(fresh)

    def kept(folder):
        return [
            {k: s.get(k) for k in ("index", "id", "example_sha256", "prediction", "scores", "error")}
            for s in samples(folder, "tq")
        ]

    assert kept(tmp_path / "run") == kept(tmp_path / "fresh" / "run")


def test_a_bad_record_that_stays_bad_but_otherwise_is_named_by_its_new_error(tmp_path):
    write_task(tmp_path, [*RECORDS[:2], json.dumps(RECORDS[2])[:-1] + "\n", RECORDS[3]])
    run(tmp_path, answer_all=False)
    write_task(tmp_path, [*RECORDS[:2], {"id": "q3"}, RECORDS[3]])  # bad another way: no question
    run(tmp_path, answer_all=True, resume=True)
    [bad] = [s for s in samples(tmp_path / "run", "tq") if s.get("bad_record")]
    assert "cut short" not in bad["error"] and bad["index"] == 2, bad
