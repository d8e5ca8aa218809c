"""A run's mode (ragbench._run.modes.run_modes) is decided once, from its options and its folder, before any engine
loads: fresh without --resume; on --resume, finished (results.json read back), rebuilt (results.json lost),
score-only (a metric failed) or resumed (a sample lost)."""

from __future__ import annotations

import json
from typing import get_args

from test_resume_data_changes import RECORDS, TASK

from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench._run.models import run_engines
from ragbench._run.modes.attempt import FRESH, RESUMED, SCORE_ONLY, Attempt
from ragbench._run.modes.run_modes import AlreadyFinishedRun, RebuiltRun, RunMode, run_mode
from ragbench._run.plan.planning import run_registry
from ragbench._run.services import RunServices


def mode_of(folder, resume: bool = True):
    """The mode a closed-book run of the task in `folder` is in (`resume`: with --resume); no engine may load."""
    config = RunConfig.of(
        tasks=[str(folder / "t.yaml")],
        system="closed_book",
        model=f"scripted:{folder / 'rules.json'}",
        output=str(folder / "run"),
        resume=resume,
        progress=False,
        bootstrap_iters=0,
    )
    plan = Evaluator(config, run_registry(config.what)).plan
    with RunServices(config, plan.registry, plan.run_dir) as services:
        return run_mode(plan, plan.open_retrieval(services))


def write_task(folder):
    """A closed-book task of four records, and the rules of a scripted model, in `folder`."""
    (folder / "t.yaml").write_text(TASK)
    (folder / "data.jsonl").write_text("".join(json.dumps(record) + "\n" for record in RECORDS))
    (folder / "rules.json").write_text(json.dumps([{"response": "one"}]))


def finished_run(folder):
    """A finished closed-book run of the task `write_task` writes, in `folder`/run."""
    write_task(folder)
    config = RunConfig.of(
        tasks=[str(folder / "t.yaml")],
        system="closed_book",
        progress=False,
        bootstrap_iters=0,
        model=f"scripted:{folder / 'rules.json'}",
        output=str(folder / "run"),
    )
    Evaluator(config, run_registry(config.what)).run()
    return folder / "run"


def steps_of(mode):
    """The steps `mode` takes, an attempt's (a mode that makes no attempt fails the test)."""
    assert type(mode) is Attempt
    return mode.steps


def no_engine_loads(monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("an engine loaded before the mode was decided")

    monkeypatch.setattr(run_engines, "load_engine", refused)


def test_a_run_without_resume_is_a_fresh_run(tmp_path, monkeypatch):
    write_task(tmp_path)
    no_engine_loads(monkeypatch)
    assert steps_of(mode_of(tmp_path, resume=False)) is FRESH


def test_a_finished_run_resumed_with_nothing_left_is_finished(tmp_path, monkeypatch):
    finished_run(tmp_path)
    no_engine_loads(monkeypatch)
    assert type(mode_of(tmp_path)) is AlreadyFinishedRun


def test_a_finished_run_whose_results_json_is_lost_is_rebuilt(tmp_path, monkeypatch):
    (finished_run(tmp_path) / "results.json").unlink()
    no_engine_loads(monkeypatch)
    assert type(mode_of(tmp_path)) is RebuiltRun


def test_a_finished_run_with_a_failed_metric_only_scores_it_again(tmp_path, monkeypatch):
    samples = finished_run(tmp_path) / "samples" / "tq.jsonl"
    first, *rest = samples.read_text().splitlines(keepends=True)
    failed = {**json.loads(first), "scores": {}, "score_errors": {"em": "RuntimeError: the metric failed"}}
    samples.write_text(json.dumps(failed) + "\n" + "".join(rest))
    no_engine_loads(monkeypatch)
    assert steps_of(mode_of(tmp_path)) is SCORE_ONLY


def test_a_finished_run_that_lost_a_sample_is_resumed(tmp_path, monkeypatch):
    samples = finished_run(tmp_path) / "samples" / "tq.jsonl"
    samples.write_text("".join(samples.read_text().splitlines(keepends=True)[1:]))
    no_engine_loads(monkeypatch)
    assert steps_of(mode_of(tmp_path)) is RESUMED


def test_no_mode_subclasses_another():
    """A run is its plan and the steps it takes (`AttemptSteps`), composed: no mode overrides another's methods."""
    assert all(mode.__bases__ == (object,) for mode in get_args(RunMode))
