"""A large record is parsed in the workers' record lane (not behind the page work queued in the pool);
on the main thread, and while the lane is starting, it is parsed in place."""
from __future__ import annotations

import json
import os
import threading
import time

import pytest

from ragbench.run import workers
from ragbench.tasks.crag import loader
from ragbench.tasks.crag.loader import LARGE_RECORD_BYTES, loads

LINE = json.dumps({"page_result": "x" * LARGE_RECORD_BYTES})


def in_thread(fn):
    out = []
    thread = threading.Thread(target=lambda: out.append(fn()))
    thread.start()
    thread.join()
    return out[0]


def lane_calls(monkeypatch) -> list:
    calls = []
    real = workers.in_record_lane

    def counted(fn, *args):
        calls.append(fn)
        return real(fn, *args)

    monkeypatch.setattr(loader.workers, "in_record_lane", counted)
    return calls


def test_a_large_record_is_parsed_while_every_pool_worker_is_busy(monkeypatch):
    calls = lane_calls(monkeypatch)
    try:
        busy = [workers.executor().submit(time.sleep, 6) for _ in range(workers.pool_size())]
        workers.start_soon()
        deadline = time.monotonic() + 30
        while not workers.lane_ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert in_thread(lambda: loads(LINE)) == {"page_result": "x" * LARGE_RECORD_BYTES}
        assert calls == [json.loads]  # in the lane
        assert not any(future.done() for future in busy)  # parsed before any worker was free
    finally:
        workers.shutdown()


def test_the_main_thread_parses_in_place_and_starts_no_process(monkeypatch):
    calls = lane_calls(monkeypatch)
    assert loads(LINE) == {"page_result": "x" * LARGE_RECORD_BYTES}
    assert calls == []
    assert not workers.running() and workers._records is None and workers._starting is None  # nothing started


def test_a_reader_does_not_wait_for_the_lane_to_start(monkeypatch):
    calls = lane_calls(monkeypatch)
    try:
        assert in_thread(lambda: loads(LINE)) == {"page_result": "x" * LARGE_RECORD_BYTES}
        assert calls == []  # parsed in the reader thread; the lane is starting meanwhile
    finally:
        workers.shutdown()


def test_a_lane_whose_process_died_is_replaced_and_the_record_still_parsed():
    try:
        assert workers.in_record_lane(os.getpid) != os.getpid()
        with pytest.raises(Exception, match="terminated abruptly"):
            workers._record_lane().submit(os._exit, 9).result()  # the lane's process is killed
        assert workers.in_record_lane(json.loads, "[1]") == [1]  # this call: here; the next: a new lane
        assert workers.in_record_lane(os.getpid) != os.getpid()
    finally:
        workers.shutdown()
