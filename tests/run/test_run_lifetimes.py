"""A run owns what it starts: its worker processes and page caches are its own (two runs in one process, at once
or one after another, never close each other's), and a worker killed mid-run is replaced on every path into the
pool. That its examples end before its teardown begins: tests/run/test_run_teardown_order.py."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from ragbench.api.run import RunResources, Workers
from ragbench.tasks.crag.pages import Offload, PageProcessor
from ragbench.tasks.crag.synthetic import PageSizes, write_task3_archive
from ragbench.testing import run_eval
from support.crag_helpers import tokenizer_dir
from support.helpers import comparable, samples
from support.process_tree import children

EMBEDDER = "support.crag_helpers:KeywordEmbedder"


def workers_of_this_process() -> list[int]:
    """Worker processes: the children of this process's children (its forkserver's)."""
    return [worker for child in children(os.getpid()) for worker in children(child)]


# --- resources owned by the run -------------------------------------------------------------------------
MAX_INFLIGHT = 2


def crag_run(tmp_path: Path, name: str, archive: Path, **overrides) -> dict:
    """results.json of a vanilla run of CRAG's Task 3 on `archive` into tmp_path/name, its page cache its own."""
    return run_eval(
        "crag_t3",
        "vanilla",
        "scripted:echo",
        data=archive,
        output=tmp_path / name,
        bootstrap_iters=50,
        max_inflight=MAX_INFLIGHT,
        page_cache=str(tmp_path / f"{name}.pages.sqlite"),
        task_args={"tokenizer": tokenizer_dir(), "kg": False, "judge_protocol": "none", "embedder": EMBEDDER},
        **overrides,
    ).results


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
            outcomes[name] = crag_run(tmp_path, name, archive, **overrides)
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
        results = outcomes[name]
        counts = results["counts"]["crag_t3"]
        assert (counts["records"], counts["scored"], counts["failed"]) == (records, records, 0), name
        cache = results["cost"]["page_cache"]  # each run its own file, with its own lookups only
        assert cache["path"] == str(tmp_path / f"{name}.pages.sqlite")
        pages = cache["by_kind"]["crag-page"]
        assert pages["hits"] + pages["misses"] == records * 6, name
    alone = crag_run(tmp_path, "alone", long)
    assert comparable(outcomes["long"]) == comparable(alone)
    assert workers_of_this_process() == []


def test_two_runs_one_after_another_each_start_and_end_their_own_workers(tmp_path, archives, monkeypatch):
    monkeypatch.setenv("RAGBENCH_WORKERS", "1")
    short, _ = archives
    for name in ("first", "second"):
        results = crag_run(tmp_path, name, short)
        assert results["counts"]["crag_t3"]["scored"] == 2 and results["cost"]["page_cache"]["hits"] == 0
        assert workers_of_this_process() == [], f"the {name} run left workers running"


def test_a_worker_killed_mid_run_fails_only_the_examples_it_was_parsing_for(tmp_path, archives, monkeypatch):
    """The pool is replaced for CRAG's page path too: the examples after the kill are scored."""
    monkeypatch.setenv("RAGBENCH_WORKERS", "1")
    _, long = archives
    outcome = {}
    thread = threading.Thread(
        target=lambda: outcome.update(results=crag_run(tmp_path, "run", long, model_args={"overhead": 0.3}))
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
    assert counts["failed"] <= MAX_INFLIGHT, counts  # at most the examples in flight at the kill
    assert counts["scored"] >= 8 - MAX_INFLIGHT - 1, counts
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
