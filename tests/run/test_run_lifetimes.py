"""A run owns what it starts: its examples end before its teardown begins, its worker processes and page
caches are its own (two runs in one process, at once or one after another, never close each other's),
and a worker killed mid-run is replaced on every path into the pool."""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench._run.lifetime.lifecycle import run_together
from ragbench._storage.rundir import RunDir
from ragbench.api.run import RunResources, Workers
from ragbench.tasks.crag.pages import Offload, PageProcessor
from ragbench.tasks.crag.synthetic import PageSizes, write_task3_archive
from ragbench.testing import installed_registry
from support.crag_helpers import tokenizer_dir
from support.helpers import comparable, samples
from support.process_tree import children

EMBEDDER = "support.crag_helpers:KeywordEmbedder"


def workers_of_this_process() -> list[int]:
    """Worker processes: the children of this process's children (its forkserver's)."""
    return [worker for child in children(os.getpid()) for worker in children(child)]


# --- the task group -------------------------------------------------------------------------------------
async def test_the_first_error_cancels_the_others_and_waits_for_them():
    ended = []

    async def fails():
        await asyncio.sleep(0.01)
        raise OSError(errno.ENOSPC, "No space left on device")

    async def runs_long(name):
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.sleep(0.05)  # its clean-up takes a while, and is waited for
            ended.append(name)

    with pytest.raises(OSError, match="No space"):
        await run_together([fails(), runs_long("a"), runs_long("b")])
    assert sorted(ended) == ["a", "b"]


async def test_cancelled_from_outside_it_waits_for_every_task_to_end():
    ended = []

    async def runs_long(name):
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.sleep(0.05)
            ended.append(name)

    group = asyncio.ensure_future(run_together([runs_long("a"), runs_long("b")]))
    await asyncio.sleep(0.01)
    group.cancel()
    with pytest.raises(asyncio.CancelledError):
        await group
    assert sorted(ended) == ["a", "b"]


def test_teardown_begins_only_when_every_example_has_ended(tmp_path, monkeypatch):
    """A sample that fails to save stops the run; the examples still running are cancelled and awaited
    first: none of them saves a sample once the teardown has begun."""
    appended, teardown_began = [], []
    real_append = RunDir.append_sample

    def append(self, task, line, attempt_cost=None):
        if len(appended) == 2:
            appended.append(("failed", time.monotonic()))
            raise OSError(errno.ENOSPC, "No space left on device")
        appended.append((line["id"], time.monotonic()))
        real_append(self, task, line, attempt_cost)

    async def slow_teardown():
        teardown_began.append(time.monotonic())
        await asyncio.sleep(1.0)  # the examples in flight would finish meanwhile

    monkeypatch.setattr(RunDir, "append_sample", append)
    config = RunConfig.of(
        tasks=["demo"],
        system="vanilla",
        model="scripted:echo",
        output=str(tmp_path / "run"),
        model_args={"overhead": 0.2, "batch_size": 1},
        max_inflight=6,
        progress=False,
        bootstrap_iters=0,
    )
    evaluator = Evaluator(config, registry=installed_registry())

    async def setup():
        return {}

    # the demo task made a task that uses tools (ragbench._task.protocols.UsesTools): its teardown is the run's to call
    monkeypatch.setattr(evaluator.planned[0].task, "setup", setup, raising=False)
    monkeypatch.setattr(evaluator.planned[0].task, "teardown", slow_teardown, raising=False)
    with pytest.raises(OSError, match="No space"):
        evaluator.run()
    assert teardown_began and len(appended) >= 3
    late = [entry for entry, at in appended if at >= teardown_began[0]]
    assert late == [], f"saved after the teardown began: {late}"


# --- resources owned by the run -------------------------------------------------------------------------
def crag_config(tmp_path: Path, name: str, archive: Path, **overrides) -> RunConfig:
    return RunConfig.of(
        tasks=["crag_t3"],
        system="vanilla",
        model="scripted:echo",
        data={"crag_t3": str(archive)},
        output=str(tmp_path / name),
        progress=False,
        bootstrap_iters=50,
        max_inflight=2,
        page_cache=str(tmp_path / f"{name}.pages.sqlite"),
        task_args={"tokenizer": tokenizer_dir(), "kg": False, "judge_protocol": "none", "embedder": EMBEDDER},
        **overrides,
    )


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    """A short and a longer Task 3 run (2 and 8 questions of 6 small pages)."""
    folder = tmp_path_factory.mktemp("crag_t3")
    return (
        write_task3_archive(folder / "short", questions=2, pages=6, sizes=PageSizes.small(4_000)),
        write_task3_archive(folder / "long", questions=8, pages=6, sizes=PageSizes.small(4_000)),
    )


def test_two_runs_at_once_in_two_threads_keep_their_own_workers_and_page_caches(tmp_path, archives, monkeypatch):
    """The short run ends (closing its workers and page cache) while the long one still parses pages."""
    monkeypatch.setenv("RAGBENCH_WORKERS", "1")
    short, long = archives
    outcomes, errors = {}, []

    def run(name, archive, **overrides):
        try:
            outcomes[name] = Evaluator(
                crag_config(tmp_path, name, archive, **overrides), registry=installed_registry()
            ).run()
        except BaseException as exc:  # reported by the test
            errors.append(f"{name}: {type(exc).__name__}: {exc}")

    threads = [
        threading.Thread(target=run, args=("short", short)),
        threading.Thread(target=run, args=("long", long), kwargs={"model_args": {"overhead": 0.3}}),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors
    for name, records in (("short", 2), ("long", 8)):
        results = outcomes[name].results
        counts = results["counts"]["crag_t3"]
        assert (counts["records"], counts["scored"], counts["failed"]) == (records, records, 0), name
        cache = results["cost"]["page_cache"]  # each run its own file, with its own lookups only
        assert cache["path"] == str(tmp_path / f"{name}.pages.sqlite")
        pages = cache["by_kind"]["crag-page"]
        assert pages["hits"] + pages["misses"] == records * 6, name
    alone = Evaluator(crag_config(tmp_path, "alone", long), registry=installed_registry()).run().results
    assert comparable(outcomes["long"].results) == comparable(alone)
    assert workers_of_this_process() == []


def test_two_runs_one_after_another_each_start_and_end_their_own_workers(tmp_path, archives, monkeypatch):
    monkeypatch.setenv("RAGBENCH_WORKERS", "1")
    short, _ = archives
    for name in ("first", "second"):
        results = Evaluator(crag_config(tmp_path, name, short), registry=installed_registry()).run().results
        assert results["counts"]["crag_t3"]["scored"] == 2 and results["cost"]["page_cache"]["hits"] == 0
        assert workers_of_this_process() == [], f"the {name} run left workers running"


def test_a_worker_killed_mid_run_fails_only_the_examples_it_was_parsing_for(tmp_path, archives, monkeypatch):
    """The pool is replaced for CRAG's page path too: the examples after the kill are scored."""
    monkeypatch.setenv("RAGBENCH_WORKERS", "1")
    _, long = archives
    config = crag_config(tmp_path, "run", long, model_args={"overhead": 0.3})
    outcome = {}
    thread = threading.Thread(
        target=lambda: outcome.update(results=Evaluator(config, installed_registry()).run().results)
    )
    thread.start()
    saved = tmp_path / "run" / "samples" / "crag_t3.jsonl"
    deadline = time.monotonic() + 120
    while not (saved.is_file() and saved.read_text().count("\n") >= 1) and time.monotonic() < deadline:
        time.sleep(0.02)
    killed = workers_of_this_process()
    assert killed, "no worker process was running"
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    thread.join(timeout=300)
    counts = outcome["results"]["counts"]["crag_t3"]
    assert counts["failed"] <= config.limits.max_inflight, counts  # at most the examples in flight at the kill
    assert counts["scored"] >= 8 - config.limits.max_inflight - 1, counts
    failed = [s for s in samples(tmp_path / "run", "crag_t3") if s.get("error")]
    assert all("BrokenProcessPool" in s["error"] or "terminated abruptly" in s["error"] for s in failed), failed


async def test_a_killed_worker_is_replaced_for_the_next_page():
    workers = Workers(1)
    processor = PageProcessor(Offload(workers))
    try:
        assert await processor.sentences(["<p>One page. Two sentences.</p>"]) == [["One page.", "Two sentences."]]
        os.kill(await workers.run(os.getpid), signal.SIGKILL)  # the worker dies while idle
        await asyncio.sleep(0.5)  # the pool has seen it
        assert await processor.sentences(["<p>Another page.</p>"]) == [["Another page."]]
    finally:
        workers.close()


def test_closed_resources_start_nothing_and_parse_in_place():
    resources = RunResources()
    resources.close()
    assert resources.workers.in_record_lane(int, "7") == 7

    async def after_close():
        with pytest.raises(RuntimeError, match="closed"):
            await resources.workers.run(int, "7")

    asyncio.run(after_close())
    assert workers_of_this_process() == []
