"""How many examples run at once: by default enough to fill the model engine's batch, so that a
one-call-per-example system hands a GPU engine the batch size it found (an `hf` engine at
`batch_size=auto` 256 got batches of 64 on an H100, 0.26-0.31x its tokens/s)."""

from __future__ import annotations

import asyncio
import sys
import types

import pytest

from conftest import write_jsonl
from ragbench._config.limits import examples_in_flight
from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench.api import Prediction, System
from ragbench.testing import Registry
from support.helpers import run


def popqa(tmp_path, count: int):
    rows = [
        {"question": f"Who is person {i}?", "answers": [f"answer{i}"], "id": i, "prop": "occupation", "ctxs": []}
        for i in range(count)
    ]
    return str(write_jsonl(tmp_path / "popqa.jsonl", rows))


def test_a_closed_book_run_fills_the_engines_batch_by_default(tmp_path):
    results = run(
        tmp_path,
        tasks=["popqa"],
        system="closed_book",
        model="scripted:echo",
        model_args={"batch_size": 200},
        data={"popqa": popqa(tmp_path, 200)},
        bootstrap_iters=0,
    )
    assert results["counts"]["popqa"]["scored"] == 200
    assert results["cost"]["batches"] == 1  # 64 in flight made 4


class SlowToAsk(System):
    """Works before its one call: in a thread (as a record read or a metric in a thread does) and, for every
    other example, for more event-loop rounds than any fixed settling would wait."""

    name = "slow_to_ask"

    async def run(self, example, ctx):
        await asyncio.to_thread(str, example.id)
        for _ in range(5000 if int(example.id) % 2 else 0):
            await asyncio.sleep(0)
        return Prediction(example_id=example.id, answer=(await ctx.llm.generate(example.question)).text)


def test_the_batch_waits_for_every_example_in_flight_to_ask(tmp_path):
    """The batch is made when every example in flight has queued its call, however long each works
    before (a fixed number of loop rounds or a time made 2-8 batches, by the machine's speed)."""
    registry = Registry.discover()
    registry.add_catalog({"systems": {"slow_to_ask": {"target": f"{__name__}:SlowToAsk"}}}, "tests")
    config = RunConfig.of(
        tasks=["popqa"],
        system="slow_to_ask",
        model="scripted:echo",
        model_args={"batch_size": 64},
        data={"popqa": popqa(tmp_path, 64)},
        output=str(tmp_path / "run"),
        progress=False,
        bootstrap_iters=0,
    )
    results = Evaluator(config, registry=registry).run().results
    assert results["counts"]["popqa"]["scored"] == 64
    assert results["cost"]["batches"] == 1, results["cost"]


def test_max_inflight_given_is_kept(tmp_path):
    results = run(
        tmp_path,
        tasks=["popqa"],
        system="closed_book",
        model="scripted:echo",
        max_inflight=10,
        model_args={"batch_size": 200},
        data={"popqa": popqa(tmp_path, 100)},
        bootstrap_iters=0,
    )
    assert results["cost"]["batches"] >= 10


class Engine:
    def __init__(self, batch: int, concurrency: int = 16, concurrent: bool = False) -> None:
        self.max_batch_size, self.max_concurrency, self.concurrent = batch, concurrency, concurrent


@pytest.mark.parametrize(
    "engine, expected",
    [
        (None, 64),  # no model engine (a rescore): 64
        (Engine(16), 64),  # at least 64: a multi-call system keeps its engine busy with fewer examples
        (Engine(256), 256),
        (Engine(1024), 256),  # at most 256: every example in flight holds its data
        (Engine(16, concurrency=128, concurrent=True), 128),  # an HTTP server: its concurrency
        (Engine(16, concurrency=128), 64),  # concurrency of an engine that batches itself does not count
    ],
)
def test_the_default_follows_the_engine_between_64_and_256(engine, expected):
    assert examples_in_flight(None, engine) == expected
    assert examples_in_flight(7, engine) == 7


def test_the_gpu_embedder_turns_cudnn_attention_off(monkeypatch, tmp_path):
    """cuDNN's SDPA builds a plan per batch shape: MiniLM at 1,700 sentences/s on an H100 with it,
    6,700 without. No GPU here: the model class is a stand-in, the switch is torch's own."""
    torch = pytest.importorskip("torch")
    from ragbench.tasks.crag.embedder import Placement, SentenceTransformerModel

    placed = []
    fake = types.ModuleType("sentence_transformers")
    fake.SentenceTransformer = lambda path, device: placed.append(device) or types.SimpleNamespace()
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    was = torch.backends.cuda.cudnn_sdp_enabled()
    try:
        torch.backends.cuda.enable_cudnn_sdp(True)
        SentenceTransformerModel(tmp_path, Placement("cpu", "fp32", 128))
        assert torch.backends.cuda.cudnn_sdp_enabled()  # the CPU placement leaves it alone
        SentenceTransformerModel(tmp_path, Placement("cuda", "fp32", 512))
        assert not torch.backends.cuda.cudnn_sdp_enabled()
        assert placed == ["cpu", "cuda"]
    finally:
        torch.backends.cuda.enable_cudnn_sdp(was)


@pytest.mark.parametrize(
    ("limit", "max_inflight", "workers"), [(2, None, 2), (2, 1, 1), (None, None, 64), (100, 10, 10)]
)
def test_a_run_starts_no_more_example_workers_than_limit_lets_run(tmp_path, monkeypatch, limit, max_inflight, workers):
    """Each worker takes records until none is left: one more than --limit's records only starts and stops (a
    2-example run started 64). The records all run, whatever the number."""
    from ragbench._run.modes.attempt import Attempt

    started = []
    worker = Attempt.worker

    def counted(self, *args):
        started.append(1)
        return worker(self, *args)

    monkeypatch.setattr(Attempt, "worker", counted)
    results = run(
        tmp_path,
        tasks=["popqa"],
        system="closed_book",
        model="scripted:echo",
        data={"popqa": popqa(tmp_path, 3)},
        limit=limit,
        max_inflight=max_inflight,
        bootstrap_iters=0,
    )
    assert len(started) == workers
    assert results["counts"]["popqa"]["scored"] == min(3, limit or 3)


def test_a_settling_wait_that_sees_examples_come_and_go_is_not_a_stall(monkeypatch):
    """The model's scheduler waits (past searches) until every example has asked. One example waits on a search
    that is answered after half the stall time, then works across the stall time's end before it asks: a wait
    longer than STALL_SECONDS in which an example stopped waiting is not a stall (CI, loaded, saw a long phase of
    searches end in one, and a batch that differed from a fast machine's)."""
    import ragbench._in_flight as in_flight

    monkeypatch.setattr(in_flight, "STALL_SECONDS", 0.2)
    examples = in_flight.ExamplesInFlight()

    async def scenario() -> int:
        loop = asyncio.get_running_loop()
        asked, search, answer = loop.create_future(), loop.create_future(), loop.create_future()

        async def asks_at_once() -> None:
            with examples.slot(), in_flight.waiting_for(asked):
                await asked

        async def searches_works_then_asks() -> None:
            with examples.slot():
                with in_flight.waiting_for(search, leaf=True):
                    await search
                await asyncio.sleep(0.15)  # working (a tool's I/O) across the stall time's end
                with in_flight.waiting_for(answer):
                    await answer

        workers = [asyncio.create_task(asks_at_once()), asyncio.create_task(searches_works_then_asks())]
        loop.call_later(0.1, search.set_result, None)
        await asyncio.sleep(0)  # both examples in flight, waiting on their calls
        await examples.settled(past_leaves=True)
        settled_with = sum(bool(slot.blocked_past_leaves()) for slot in examples._slots)
        asked.set_result(None)
        answer.set_result(None)
        await asyncio.gather(*workers)
        return settled_with

    assert asyncio.run(scenario()) == 2  # both asked before the batch, was 1 (the other still working)
    assert examples.stalls == 0


def test_an_example_that_works_while_no_other_comes_or_goes_is_a_stall_and_the_batch_goes(monkeypatch):
    """An example that awaits what another's call will answer, without saying so (`waiting_for`), works as far as
    the scheduler can tell: once nothing has come or gone for STALL_SECONDS the batch goes without it (counted),
    else the run would wait forever."""
    import ragbench._in_flight as in_flight

    monkeypatch.setattr(in_flight, "STALL_SECONDS", 0.05)
    examples = in_flight.ExamplesInFlight()

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        asked = loop.create_future()

        async def asks() -> None:
            with examples.slot(), in_flight.waiting_for(asked):
                await asked

        async def awaits_the_others_answer_unsaid() -> None:
            with examples.slot():
                await asked

        workers = [asyncio.create_task(asks()), asyncio.create_task(awaits_the_others_answer_unsaid())]
        await asyncio.sleep(0)
        await examples.settled(past_leaves=True)
        asked.set_result(None)
        await asyncio.gather(*workers)

    asyncio.run(scenario())
    assert examples.stalls == 1
