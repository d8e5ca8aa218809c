"""Data parallelism: replicas of one model (several endpoints, or Ray actors), least-loaded dispatch,
a failed replica's work retried elsewhere, batches running on every replica at once."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest
from test_engine_openai import FakeServer, error

from ragbench._engines.replicas import ReplicaSet
from ragbench._engines.scripted import ScriptedEngine
from ragbench._scheduler import Scheduler
from ragbench._values.engine_errors import EngineError, RequestError, request_fault
from ragbench._values.llm_request import Request
from ragbench._values.llm_responses import Response
from ragbench._values.sampling import Sampling
from ragbench.api.engines import Engine
from ragbench.testing import installed_registry, load_engine
from support.helpers import run, samples


class Broken(Engine):
    kind = "broken"

    def generate(self, requests):
        raise ConnectionError("replica lost")

    async def agenerate_one(self, request):
        raise EngineError("connection failed after 3 attempts")


def requests(n: int) -> list[Request]:
    return [Request(prompt=f"line\nanswer {i}", sampling=Sampling(max_tokens=4)) for i in range(n)]


async def through_scheduler(engine, batch):
    scheduler = Scheduler()
    try:
        return await asyncio.gather(*(scheduler.submit(engine, r) for r in batch))
    finally:
        await scheduler.close()


class AtOnce(ScriptedEngine):
    """A replica whose batch ends only once every replica's batch has started (`gate`, a barrier of them all):
    batches run one after another break it."""

    def __init__(self, gate: threading.Barrier, **options) -> None:
        super().__init__("echo", **options)
        self.gate = gate

    def generate(self, requests):
        self.gate.wait(timeout=600)  # a bound on a failure only: the four batches at once pass it together
        return super().generate(requests)


def test_batches_run_on_every_replica_at_once(tmp_path):
    """Four batches side by side, not one after another (was: timed, which a loaded machine failed)."""
    gate = threading.Barrier(4)
    engine = ReplicaSet([AtOnce(gate, overhead=0.2, batch_size=4) for _ in range(4)])
    answers = asyncio.run(through_scheduler(engine, requests(16)))
    assert [a.text for a in answers] == [f"answer {i}" for i in range(16)]
    assert engine.served == [4, 4, 4, 4]  # least loaded: each replica took one batch of 4


def test_a_replica_that_fails_is_set_aside_and_its_batch_retried_elsewhere():
    engine = ReplicaSet([Broken("m"), ScriptedEngine("echo", batch_size=4)], ["bad", "good"])
    answers = asyncio.run(through_scheduler(engine, requests(8)))
    assert [a.text for a in answers] == [f"answer {i}" for i in range(8)] and engine.served == [0, 8]


def test_when_every_replica_fails_the_requests_fail_with_each_cause():
    engine = ReplicaSet([Broken("m"), Broken("m")], ["a", "b"])
    with pytest.raises(EngineError, match="every replica failed: a: ConnectionError: replica lost; b: "):
        engine.generate(requests(1))


def free_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


def test_several_endpoints_share_the_load_and_cover_for_a_dead_one(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    first, second = FakeServer(), FakeServer()
    first.delay = second.delay = 0.05
    try:
        engine = load_engine(
            "openai:m",
            base_url=[first.base_url, second.base_url, free_url()],
            max_retries=0,
            registry=installed_registry(),
        )
        assert isinstance(engine, ReplicaSet) and engine.concurrent

        async def go():
            try:
                return await through_scheduler(engine, requests(30))
            finally:
                await engine.aclose()

        answers = asyncio.run(go())
    finally:
        first.stop()
        second.stop()
    assert len(answers) == 30 and all(isinstance(a, Response) for a in answers)
    assert engine.served[2] == 0 and min(engine.served[:2]) >= 10  # least loaded, and the dead one covered


def two_endpoints(first_url: str, second_url: str) -> ReplicaSet:
    engine = load_engine(
        "openai:m",
        base_url=[first_url, second_url],
        backoff_base=0.001,
        backoff_max=0.01,
        registry=installed_registry(),
    )
    assert isinstance(engine, ReplicaSet)
    return engine


def ask(engine: ReplicaSet, count: int) -> list:
    """`count` requests one after another, each its result or its error."""

    async def go():
        out = []
        try:
            for request in requests(count):
                try:
                    out.append(await engine.agenerate_one(request))
                except EngineError as exc:
                    out.append(exc)
        finally:
            await engine.aclose()
        return out

    return asyncio.run(go())


def test_a_bad_request_fails_once_and_demotes_no_replica(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    first, second = FakeServer(), FakeServer()
    first.then(error(400, "This model's maximum context length is 2048 tokens"))
    try:
        engine = two_endpoints(first.base_url, second.base_url)
        failed, answered = ask(engine, 2)
    finally:
        first.stop()
        second.stop()
    assert isinstance(failed, RequestError) and "HTTP 400" in str(failed) and "every replica" not in str(failed)
    assert (len(first.requests), len(second.requests)) == (2, 0)  # not re-sent; the first replica kept its place
    assert isinstance(answered, Response) and engine.failures == [0, 0] and engine.served == [1, 0]


def test_a_connection_error_demotes_the_replica_and_fails_over(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    live = FakeServer()
    try:
        engine = two_endpoints(free_url(), live.base_url)
        answers = ask(engine, 3)
    finally:
        live.stop()
    assert all(isinstance(a, Response) for a in answers) and len(live.requests) == 3
    assert engine.failures == [1, 0] and engine.served == [0, 3]  # tried once, then set aside


def test_repeated_base_url_reaches_the_engine_as_replicas(tmp_path):
    server = FakeServer()
    try:
        results = run(
            tmp_path,
            tasks=["demo"],
            system="closed_book",
            model="openai:m",
            limit=3,
            model_args={"base_url": [server.base_url, server.base_url]},
        )
    finally:
        server.stop()
    assert results["complete"] and len(samples(tmp_path / "run", "demo")) == 3


def test_two_ray_replicas_of_a_cpu_engine_run_a_whole_evaluation(tmp_path, ray_cluster):
    results = run(
        tmp_path,
        tasks=["demo"],
        system="closed_book",
        model="scripted:echo",
        limit=6,
        model_args={"replicas": 2, "batch_size": 2, "overhead": 0.05},
    )
    assert results["complete"] and results["counts"]["demo"]["scored"] == 6


def test_a_dead_ray_replica_is_replaced_by_the_live_one(ray_cluster):
    import ray

    engine = load_engine("scripted:echo", replicas=2, batch_size=4, registry=installed_registry())
    try:
        dead = engine.replicas[0].actor
        ray.kill(dead)
        for _ in range(100):  # ray.kill is asynchronous: wait until the actor no longer answers
            try:
                ray.get(dead.describe.remote(), timeout=5)
            except Exception:
                break
            time.sleep(0.1)
        answers = asyncio.run(through_scheduler(engine, requests(8)))
        assert [a.text for a in answers] == [f"answer {i}" for i in range(8)]
        assert engine.served[0] == 0 and engine.served[1] == 8
    finally:
        engine.close()


def test_a_request_fault_raised_in_a_ray_actor_is_still_a_request_fault(ray_cluster):
    import ray

    @ray.remote
    def refuse():
        raise RequestError("prompt longer than the context")

    with pytest.raises(Exception) as caught:
        ray.get(refuse.remote())
    fault = request_fault(caught.value)
    assert isinstance(fault, RequestError) and str(fault) == "prompt longer than the context"
    assert request_fault(EngineError("connection failed")) is None
