"""The units below a run that never loses an example (ragbench._storage, ._scheduler, ._run), with no public face:
a line cut at any byte never glues onto the next append, the dispatcher never hangs (an engine answering fewer
results, a failing cache), two processes share one cache file, an interrupted attempt's calls count after the
resume (the stop raised as the run's handler raises it), the samples finalized in data order.
tests/run/test_run_integrity.py tests the runs."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import signal

import pytest
from test_run_integrity import FlakyOnce, popqa, popqa_run

from ragbench._records import saved_lines
from ragbench._run.lifetime.interrupted import RunInterrupted
from ragbench._run.models import run_engines
from ragbench._scheduler import Scheduler
from ragbench._stop_signals import raise_stop
from ragbench._storage.cache import ResponseCache
from ragbench._storage.jsonl import open_append
from ragbench._storage.rundir import RunDir
from ragbench._storage.sample_files import iter_samples
from ragbench.api import EngineError
from ragbench.api.engines import Engine, Request, Response, Sampling


def test_a_line_cut_at_any_byte_never_glues_onto_the_next_append(tmp_path):
    whole = json.dumps({"id": "a", "index": 0}) + "\n"
    for cut in range(1, len(whole)):
        path = tmp_path / f"cut{cut}.jsonl"
        path.write_text(whole[:cut])
        with open_append(path) as handle:
            handle.write({"id": "b", "index": 1})
        lines = path.read_text().splitlines()
        assert json.loads(lines[-1]) == {"id": "b", "index": 1}, cut
        if cut < len(whole) - 1:
            assert len(lines) == 2  # the cut line alone, unreadable, then the new whole one


class ShortAnswers(Engine):
    kind = "short"

    def generate(self, requests):
        return [Response(texts=["only one"])]  # fewer results than requests


class BrokenCache(ResponseCache):
    def put_many(self, entries):
        raise RuntimeError("database is locked")


def run_requests(engine, n, cache=None):
    async def go():
        scheduler = Scheduler(cache)
        try:
            return await asyncio.wait_for(
                asyncio.gather(
                    *(scheduler.submit(engine, Request(prompt=f"p{i}", sampling=Sampling())) for i in range(n)),
                    return_exceptions=True,
                ),
                timeout=10,
            )
        finally:
            await scheduler.close()

    return asyncio.run(go())


def test_an_engine_answering_fewer_results_fails_the_batch_instead_of_hanging():
    results = run_requests(ShortAnswers("m"), 3)
    assert all(isinstance(r, EngineError) and "answered 1 results for 3 requests" in str(r) for r in results)


def test_a_failing_cache_does_not_stop_the_answers(tmp_path):
    from ragbench._engines.scripted import ScriptedEngine

    cache = BrokenCache(tmp_path / "c.sqlite")
    results = run_requests(ScriptedEngine("echo"), 3, cache)
    assert [r.text for r in results] == ["p0", "p1", "p2"]
    cache.close()


def _write_many(path: str, offset: int) -> None:
    cache = ResponseCache(path)
    for i in range(200):
        request = Request(prompt=f"{offset}-{i}")
        cache.put_many([(request.cache_key("e"), "e", Response(texts=["x"]))])
    cache.close()


def test_two_processes_share_one_cache_file(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ResponseCache(path).close()
    workers = [multiprocessing.get_context("spawn").Process(target=_write_many, args=(path, n)) for n in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0]
    assert len(ResponseCache(path)) == 400


class InterruptedAfterThree(Engine):
    """Answers like echo three times, then the user presses Ctrl-C (raised as the run's handler raises it:
    an engine's own `raise KeyboardInterrupt` is its fault, counted, ragbench._plugin_calls)."""

    kind = "interrupted"
    answered = 0

    def generate(self, requests):
        if InterruptedAfterThree.answered >= 3:
            raise_stop(signal.SIGINT)
        InterruptedAfterThree.answered += len(requests)
        return [Response(texts=[r.prompt.rsplit("\n", 1)[-1]], prompt_tokens=10, completion_tokens=2) for r in requests]


def test_an_interrupted_attempts_calls_count_in_the_cost_after_resume(tmp_path, monkeypatch):
    data = popqa(tmp_path, n=6)
    InterruptedAfterThree.answered = 0
    monkeypatch.setattr(run_engines, "load_engine", lambda model, **options: InterruptedAfterThree(model))
    with pytest.raises(RunInterrupted):
        popqa_run(tmp_path, data, "closed_book", "scripted:interrupted", max_inflight=1)
    interrupted = json.loads((tmp_path / "run" / "run.json").read_text())["attempts"]
    assert len(interrupted) == 1 and interrupted[0]["interrupted"] and interrupted[0]["llm_calls"] == 3
    monkeypatch.setattr(run_engines, "load_engine", lambda model, **options: FlakyOnce(model))
    FlakyOnce.failed = True  # answers every call
    results = popqa_run(tmp_path, data, "closed_book", "scripted:interrupted", max_inflight=1, resume=True)
    assert results["complete"] and results["cost"]["attempts"] == 2 and results["cost"]["interrupted_attempts"] == 1
    assert results["cost"]["this_attempt"]["llm_calls"] == 3 and results["cost"]["llm_calls"] == 6
    assert results["cost"]["prompt_tokens"] >= 30  # the interrupted attempt's tokens are kept


def test_finalizing_keeps_the_latest_attempt_of_each_record_in_data_order_line_for_line(tmp_path):
    run_dir = RunDir(tmp_path)
    path = run_dir.sample_path("t")
    path.parent.mkdir(parents=True)
    lines = [
        {"id": "b", "index": 1, "error": "x"},
        {"id": "c", "index": 2},
        {"id": "a", "index": 0, "text": "é"},
        {"id": "b", "index": 1, "scores": {"m": 1}},
    ]
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines)
        + '{"id": "d", "ind\n'
        + json.dumps({"id": None, "index": 3, "bad_record": True}),
        encoding="utf-8",
    )  # no final newline
    run_dir.finalize_samples("t", saved_lines)
    assert [r.get("id") for r in iter_samples(path)] == ["a", "b", "c", None]
    assert list(iter_samples(path))[1] == {"id": "b", "index": 1, "scores": {"m": 1}}
    assert path.read_text(encoding="utf-8").splitlines()[0] == json.dumps(lines[2], ensure_ascii=False)
    assert path.read_text(encoding="utf-8").endswith("}\n")
