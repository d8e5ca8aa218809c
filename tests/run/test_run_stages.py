"""A run's services open in stages, each returning what the next takes (ragbench._run.services): no handle is
left on `RunServices` to be set later, the calls return what they report as they end, and the records to do hold
their own checkpoints (ragbench._run.modes.planned_run.RecordsToDo). run.json reads typed (`RunRecord`), a damaged one
refused in one line."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ragbench._cost.run_cost import CallReports
from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench._run.services import Calls, Opened, held_services
from ragbench._storage.run_record import RunRecord
from ragbench._storage.rundir import RunDir
from ragbench.api import ConfigError
from ragbench.testing import installed_registry


def plan_of(folder, **config):
    return Evaluator(
        RunConfig.of(
            tasks=["demo"],
            system="vanilla",
            model="scripted:echo",
            limit=3,
            progress=False,
            bootstrap_iters=0,
            output=str(folder / "run"),
            **config,
        ),
        installed_registry(),
    ).plan


def test_each_stage_returns_what_it_opened_and_the_calls_return_their_statistics(tmp_path):
    plan = plan_of(tmp_path)
    with held_services(plan.config, plan.registry, plan.run_dir, lock_now=False) as services:
        retrieved = plan.open_retrieval(services)
        resources = services.open_resources(plan.planned)
        engines = services.open_engines(plan.planned)
        services.start_folder(plan.full_config(retrieved, {}, {}), plan.data_fingerprints())
        opened = Opened(resources, engines, services.open_cache(), retrieved.opened)

        async def work(calls: Calls) -> str:
            assert calls.example.llm is not None
            return (await calls.example.llm.generate("Who wrote Hamlet?")).text

        async def both() -> tuple[str, CallReports]:
            return await services.run_calls(opened, work)

        answer, reports = asyncio.run(both())
        stores = opened.store_reports(reports)
        services.close()
        assert vars(services).keys() == {"config", "registry", "run_dir", "interrupted", "batch_board", "_opened"}
    assert "Hamlet" in answer
    assert reports.calls["calls"] == 1 and reports.calls["batches"] == 1
    assert stores.calls is reports and stores.response_cache is not None
    assert stores.response_cache["path"] == str(tmp_path / "run" / "cache.sqlite")


def test_the_records_to_do_hold_their_own_checkpoints_and_leave_the_callers_alone(tmp_path):
    plan = plan_of(tmp_path)
    given_checkpoints: dict = {}
    todo = plan.records_to_do(resume=False, read=given_checkpoints)
    first = todo.first()
    assert first is not None and first[1] == 0  # the first record of the demo task, at its position
    assert given_checkpoints == {} and list(todo.checkpoints) == ["demo"]
    assert [position for _, position, _ in todo.each()] == [0, 1, 2]  # --limit 3


def test_a_finished_runs_record_reads_typed(tmp_path):
    Evaluator(plan_of(tmp_path).config, installed_registry()).run()
    recorded = RunDir(tmp_path / "run").record
    assert recorded is not None and recorded.finished and recorded.records == {"demo": 3}
    assert recorded.config["tasks"] == ["demo"] and recorded.config_hash
    [attempt] = recorded.attempts
    assert attempt["examples"] == 3 and attempt["llm_calls"] == 3 and "interrupted" not in attempt


def test_an_older_run_json_reads_its_missing_keys_as_empty(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"config": {"tasks": ["demo"]}, "config_hash": "abc"}))
    recorded = RunDir(tmp_path).record
    assert recorded == RunRecord(
        config={"tasks": ["demo"]}, identity={}, config_hash="abc", data={}, finished=None, records=None, attempts=[]
    )
    assert RunDir(tmp_path / "none").record is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
FIELDS = ["config", "identity", "config_hash", "data", "finished", "attempts", "records"]
KINDS = {
    "config": dict,
    "identity": dict,
    "config_hash": str,
    "data": dict,
    "finished": bool,
    "attempts": list,
    "records": dict,
}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A finished run's run.json object."""
    folder = tmp_path_factory.mktemp("written")
    Evaluator(plan_of(folder).config, installed_registry()).run()
    return json.loads((folder / "run" / "run.json").read_text())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(FIELDS), value=JSON)
@example(field="records", value={"demo": 1.5})  # a count of records that is no whole number
def test_run_json_with_any_value_in_a_field_reads_typed_or_is_refused_in_one_line(written, tmp_path, field, value):
    (tmp_path / "run.json").write_text(json.dumps({**written, field: value}))
    try:
        recorded = RunDir(tmp_path).record
    except ConfigError as error:
        assert "\n" not in str(error) and "run.json" in str(error)
        return
    assert recorded is not None
    for name, kind in KINDS.items():
        assert isinstance(getattr(recorded, name), kind)
    assert all(isinstance(count, int) for count in recorded.records.values())
    assert all(isinstance(attempt, dict) for attempt in recorded.attempts)


def test_the_attempts_periodic_save_writes_off_the_event_loop():
    """run.json is replaced and flushed to disk every second while examples run (50-140 ms of waiting for the disk
    on a VM): the writing is in a thread, so the examples' calls go on meanwhile. Here the write waits for the loop
    to run something else; done on the loop, it would wait in vain (and the test fail after 60 s)."""
    from ragbench._cost.run_cost import AttemptMeter

    writing, loop_ran, seen_by_the_write = threading.Event(), threading.Event(), []

    def record(_cost: object) -> None:
        writing.set()
        seen_by_the_write.append(loop_ran.wait(timeout=60))

    async def main() -> None:
        saver = asyncio.ensure_future(AttemptMeter("a1", record).save_every(seconds=0))
        while not writing.is_set():
            await asyncio.sleep(0)
        loop_ran.set()  # the loop runs while the write waits
        while not seen_by_the_write:
            await asyncio.sleep(0)
        saver.cancel()
        await asyncio.gather(saver, return_exceptions=True)

    asyncio.run(main())
    assert seen_by_the_write[0] is True


def test_a_cancelled_periodic_save_returns_only_once_its_write_has_ended():
    """The attempt's final cost is written once the saver is cancelled: a write still under way in the saver's
    thread would land after it (a finished run's run.json replaced by a cost marked interrupted)."""
    from ragbench._cost.run_cost import AttemptMeter

    started, release, ended = threading.Event(), threading.Event(), threading.Event()

    def record(_cost: object) -> None:
        started.set()
        release.wait(timeout=60)
        ended.set()

    async def main() -> None:
        saver = asyncio.ensure_future(AttemptMeter("a1", record).save_every(seconds=0))
        while not started.is_set():
            await asyncio.sleep(0)
        saver.cancel()
        for _ in range(20):
            await asyncio.sleep(0)
        assert not saver.done(), "the saver returned while its write was under way"
        release.set()
        await asyncio.gather(saver, return_exceptions=True)
        assert ended.is_set()

    asyncio.run(main())
