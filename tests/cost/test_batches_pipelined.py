"""A model's batches are chosen the same way on any machine, full, and computed while the examples the batch
before answered run (ragbench._scheduler `_dispatch`, ragbench._in_flight's searches)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from conftest import write_jsonl
from ragbench._engines.scripted import ScriptedEngine
from ragbench._in_flight import ExamplesInFlight
from ragbench._run import services
from ragbench._run.evaluator import Evaluator, RunConfig
from ragbench.api import Document, Prediction, System
from ragbench.api.retrieval import Retriever
from ragbench.testing import Registry


class SearchThenAsk(System):
    """Searches, then asks the model, one to three times (by the example's id)."""

    name = "search_then_ask"

    async def run(self, example, ctx):
        text = example.question
        for step in range(1 + int(example.id) % 3):
            docs = await ctx.retriever.search(f"{example.question} {step}", 2)
            text = (await ctx.llm.generate(f"{example.question} step {step}: {len(docs)} {text[-8:]}")).text
        return Prediction(example_id=example.id, answer=text)


class AskTwice(System):
    """Two calls in a row (`between_calls`: what it awaits between them)."""

    name = "ask_twice"

    async def between_calls(self) -> None:
        return None

    async def run(self, example, ctx):
        answer = (await ctx.llm.generate(f"{example.question} call 0")).text
        await self.between_calls()
        answer = (await ctx.llm.generate(f"{example.question} call 1: {answer[-4:]}")).text
        return Prediction(example_id=example.id, answer=answer)


class FourAtATime(Retriever):
    """Four queries per search; `seconds`: how long each search takes."""

    name = "four_at_a_time"
    max_batch_size = 4

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = float(seconds)

    def search(self, queries, k):
        if self.seconds:
            time.sleep(self.seconds)
        return [
            [Document(id=f"d{i}", title="t", text=f"{query} {i}", score=1.0 / (i + 1)) for i in range(k)]
            for query in queries
        ]


GENERATE = ScriptedEngine.generate  # the engine's own, under the wrappers the tests record batches with


def registry() -> Registry:
    found = Registry.discover()
    found.add_catalog(
        {
            "systems": {
                "search_then_ask": {"target": f"{__name__}:SearchThenAsk"},
                "ask_twice": {"target": f"{__name__}:AskTwice"},
            },
            "retrievers": {"four_at_a_time": {"target": f"{__name__}:FourAtATime"}},
        },
        "tests",
    )
    return found


def popqa(tmp_path, count: int) -> str:
    rows = [
        {"question": f"Who is person {i}?", "answers": [f"answer{i}"], "id": i, "prop": "occupation", "ctxs": []}
        for i in range(count)
    ]
    return str(write_jsonl(tmp_path / "popqa.jsonl", rows))


def batches_of_a_run(
    tmp_path,
    monkeypatch,
    name: str,
    system: str,
    examples: int,
    batch: int,
    inflight: int,
    engine_seconds: float = 0.0,
    search_seconds: float | None = None,
    per_request: float = 0.0,
) -> list[list[str]]:
    """The prompts of each batch the model engine computed, in order."""
    made: list[list[str]] = []

    def recorded(engine, requests):
        made.append([request.prompt for request in requests])
        return GENERATE(engine, requests)

    monkeypatch.setattr(ScriptedEngine, "generate", recorded)
    searching = (
        {"retriever": "four_at_a_time", "retriever_args": {"seconds": search_seconds}}
        if search_seconds is not None
        else {}
    )
    config = RunConfig.of(
        tasks=["popqa"],
        system=system,
        model="scripted:echo",
        data={"popqa": popqa(tmp_path, examples)},
        model_args={"batch_size": batch, "overhead": engine_seconds, "per_request": per_request},
        max_inflight=inflight,
        output=str(tmp_path / name),
        progress=False,
        bootstrap_iters=0,
        **searching,
    )
    results = Evaluator(config, registry=registry()).run().results
    assert results["counts"]["popqa"]["scored"] == examples
    return made


def test_a_model_batch_is_made_once_no_example_waits_on_a_search(tmp_path, monkeypatch):
    """64 examples search (four queries a search), then ask: one batch of 64 questions, not a batch of the first
    four that a search answered while the others still waited on theirs."""
    made = batches_of_a_run(tmp_path, monkeypatch, "run", "search_then_ask", 64, 64, 64, search_seconds=0.0)
    assert len(made[0]) == 64, [len(b) for b in made]


@pytest.mark.parametrize("engine_seconds, search_seconds", [(0.01, 0.0), (0.0, 0.01), (0.01, 0.01)])
def test_the_batches_do_not_depend_on_how_fast_the_engine_and_the_retriever_answer(
    tmp_path, monkeypatch, engine_seconds, search_seconds
):
    fast = batches_of_a_run(tmp_path, monkeypatch, "fast", "search_then_ask", 48, 16, 40, search_seconds=0.0)
    slow = batches_of_a_run(
        tmp_path,
        monkeypatch,
        "slow",
        "search_then_ask",
        48,
        16,
        40,
        engine_seconds=engine_seconds,
        search_seconds=search_seconds,
    )
    assert slow == fast


def test_the_next_batch_starts_before_the_examples_of_the_one_before_have_their_answers(tmp_path, monkeypatch):
    """With two batches' worth of examples in flight, the second batch starts while the first batch's examples
    have not yet asked again: they ask only once it has started (they wait for it, working), and no batch waits
    for them (a stall: the scheduler would have waited STALL_SECONDS for examples that work)."""
    second_started = threading.Event()
    stalls: list = []
    batches: list[int] = []

    def watched(engine, requests):
        batches.append(len(requests))
        if len(batches) == 2:
            second_started.set()
        return GENERATE(engine, requests)

    class Watched(ExamplesInFlight):
        def __init__(self) -> None:
            super().__init__()
            stalls.append(self)

    monkeypatch.setattr(ScriptedEngine, "generate", watched)
    monkeypatch.setattr(services, "ExamplesInFlight", Watched)
    monkeypatch.setattr(AskTwice, "between_calls", lambda self: asyncio.to_thread(second_started.wait, 60))
    config = RunConfig.of(
        tasks=["popqa"],
        system="ask_twice",
        model="scripted:echo",
        data={"popqa": popqa(tmp_path, 16)},
        model_args={"batch_size": 8},
        max_inflight=16,
        output=str(tmp_path / "run"),
        progress=False,
        bootstrap_iters=0,
    )
    results = Evaluator(config, registry=registry()).run().results
    assert results["counts"]["popqa"]["scored"] == 16 and results["cost"]["batches"] == 4
    assert batches == [8, 8, 8, 8] and [examples.stalls for examples in stalls] == [0]


def test_a_small_batch_waits_for_the_answered_examples_unless_the_engine_says_it_is_worth_its_cost(
    tmp_path, monkeypatch
):
    """12 examples ask twice, batches of 10: once the first batch has computed, 2 first calls are queued. By
    default (half the limit) they wait for the 10 answered examples' second calls to fill a batch; an engine
    whose batch cost is all per request (the scripted engine's `per_request`, no `overhead`) gets them sent at
    once, while those 10 examples ask again."""
    waiting = batches_of_a_run(tmp_path, monkeypatch, "waiting", "ask_twice", 12, 10, 12)
    early = batches_of_a_run(tmp_path, monkeypatch, "early", "ask_twice", 12, 10, 12, per_request=1e-6)
    assert [len(b) for b in waiting] == [10, 10, 4]
    assert [len(b) for b in early] == [10, 2, 10, 2]
    assert sorted(map(sorted, early)) != sorted(map(sorted, waiting))


@pytest.mark.parametrize(
    "overhead, per_request, batch, early",
    [(0.05, 0.002, 256, 25), (0.0, 0.001, 16, 1), (1.0, 0.001, 16, 16), (0.05, 0.0, 16, None), (1.0, 5e-324, 16, 16)],
)
def test_the_scripted_engine_sends_an_early_batch_once_its_requests_cost_as_much_as_the_batch(
    overhead, per_request, batch, early
):
    engine = ScriptedEngine("echo", overhead=overhead, per_request=per_request, batch_size=batch)
    assert engine.early_batch == early
