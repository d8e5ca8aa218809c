"""A large record is parsed in the workers' record lane (not behind the page work queued in the pool);
on the main thread, and while the lane is starting, it is parsed in place."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from ragbench.api.run import Workers
from ragbench.tasks.crag.loader import LARGE_RECORD_BYTES, record_parser

LINE = json.dumps({"page_result": "x" * LARGE_RECORD_BYTES})


def in_thread(fn):
    out = []
    thread = threading.Thread(target=lambda: out.append(fn()))
    thread.start()
    thread.join()
    return out[0]


def counting_lane(monkeypatch, workers: Workers) -> list:
    calls = []
    real = workers.in_record_lane

    def counted(fn, *args):
        calls.append(fn)
        return real(fn, *args)

    monkeypatch.setattr(workers, "in_record_lane", counted)
    return calls


def test_a_large_record_is_parsed_while_every_pool_worker_is_busy(monkeypatch):
    workers = Workers()
    calls = counting_lane(monkeypatch, workers)
    try:
        busy = [workers._executor(lane=False).submit(time.sleep, 6) for _ in range(workers.size)]
        workers.start_soon()
        deadline = time.monotonic() + 30
        while not workers.lane_ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert in_thread(lambda: record_parser(workers)(LINE)) == {"page_result": "x" * LARGE_RECORD_BYTES}
        assert calls == [json.loads]  # in the lane
        assert not any(future.done() for future in busy)  # parsed before any worker was free
    finally:
        workers.close()


def test_the_main_thread_parses_in_place_and_starts_no_process(monkeypatch):
    workers = Workers()
    calls = counting_lane(monkeypatch, workers)
    assert record_parser(workers)(LINE) == {"page_result": "x" * LARGE_RECORD_BYTES}
    assert calls == []
    assert not workers.started and workers._lane is None and workers._starting is None  # nothing started


def test_a_reader_does_not_wait_for_the_lane_to_start(monkeypatch):
    workers = Workers()
    calls = counting_lane(monkeypatch, workers)
    try:
        assert in_thread(lambda: record_parser(workers)(LINE)) == {"page_result": "x" * LARGE_RECORD_BYTES}
        assert calls == []  # parsed in the reader thread; the lane is starting meanwhile
    finally:
        workers.close()


def test_without_a_run_a_large_record_is_parsed_in_place():
    assert in_thread(lambda: record_parser(None)(LINE)) == {"page_result": "x" * LARGE_RECORD_BYTES}


def test_a_lane_whose_process_died_is_replaced_and_the_record_still_parsed():
    workers = Workers()
    try:
        assert workers.in_record_lane(os.getpid) != os.getpid()
        with pytest.raises(Exception, match="terminated abruptly"):
            workers._executor(lane=True).submit(os._exit, 9).result()  # the lane's process is killed
        assert workers.in_record_lane(json.loads, "[1]") == [1]  # this call: here or in a new lane
        assert workers.in_record_lane(os.getpid) != os.getpid()
    finally:
        workers.close()
