"""The scheduler pools calls of concurrent examples into batches without changing any answer."""

from __future__ import annotations

import asyncio

import pytest

from ragbench._engines.scripted import ScriptedEngine
from ragbench._llm import LLM
from ragbench._scheduler import Scheduler
from ragbench._storage.cache import ResponseCache
from ragbench.api import EngineError
from ragbench.api.engines import Request, Response, Sampling


def upper(request: Request) -> str:
    return (request.prompt or "").upper()


async def multi_step(llm: LLM, i: int, steps: int) -> str:
    text = f"q{i}"
    for _ in range(steps):
        text = (await llm.generate(text + "-x", max_tokens=8)).text
    return text


async def run_examples(engine, n=40, steps_of=lambda i: 1 + i % 3, cache=None):
    scheduler = Scheduler(cache)
    llm = LLM(scheduler, engine)
    try:
        return await asyncio.gather(*(multi_step(llm, i, steps_of(i)) for i in range(n))), scheduler
    finally:
        await scheduler.close()


async def test_calls_of_concurrent_examples_are_batched_up_to_the_limit():
    engine = ScriptedEngine(script=upper, batch_size=16)
    answers, scheduler = await run_examples(engine, n=40, steps_of=lambda i: 1)
    assert engine.batch_sizes == [16, 16, 8]
    assert scheduler.stats.calls == 40 and scheduler.stats.batches == 3


async def test_answers_do_not_depend_on_batch_size():
    small, _ = await run_examples(ScriptedEngine(script=upper, batch_size=1))
    large, _ = await run_examples(ScriptedEngine(script=upper, batch_size=64))
    assert small == large
    assert small[1] == "Q1-X-X"


async def test_examples_with_different_loop_counts_keep_batches_full():
    engine = ScriptedEngine(script=upper, batch_size=64)
    await run_examples(engine, n=60, steps_of=lambda i: 1 + i % 3)
    # 60 first calls, 40 second calls, 20 third calls: one batch per step, not one per example
    assert engine.batch_sizes == [60, 40, 20]


async def test_requests_with_different_sampling_are_never_mixed_in_a_batch():
    seen = []

    def record(request: Request) -> str:
        seen.append(request.sampling.max_tokens)
        return "ok"

    engine = ScriptedEngine(script=record, batch_size=100)
    scheduler = Scheduler()
    llm = LLM(scheduler, engine)
    await asyncio.gather(*(llm.generate(f"p{i}", max_tokens=5 + i % 2) for i in range(10)))
    await scheduler.close()
    assert sorted(engine.batch_sizes) == [5, 5]
    assert seen[:5] in ([5] * 5, [6] * 5)


async def test_requests_differing_only_in_seed_share_a_batch():
    engine = ScriptedEngine(script=lambda r: f"seed {r.sampling.seed}", batch_size=10)
    scheduler = Scheduler()
    llm = LLM(scheduler, engine)
    answers = await asyncio.gather(*(llm.generate("vote", temperature=0.7, seed=i) for i in range(3)))
    await scheduler.close()
    assert engine.batch_sizes == [3]
    assert [a.text for a in answers] == ["seed 0", "seed 1", "seed 2"]


async def test_batch_is_sorted_longest_first():
    order = []
    engine = ScriptedEngine(script=lambda r: order.append(r.prompt) or "ok", batch_size=10)
    scheduler = Scheduler()
    llm = LLM(scheduler, engine)
    await asyncio.gather(*(llm.generate("x" * n) for n in (3, 9, 1, 5)))
    await scheduler.close()
    assert [len(p) for p in order] == [9, 5, 3, 1]


async def test_identical_requests_in_flight_share_one_engine_call():
    engine = ScriptedEngine(script=upper, batch_size=10)
    scheduler = Scheduler()
    llm = LLM(scheduler, engine)
    answers = await asyncio.gather(*(llm.generate("same") for _ in range(5)))
    await scheduler.close()
    assert [a.text for a in answers] == ["SAME"] * 5
    assert scheduler.stats.calls == 1 and scheduler.stats.shared == 4


async def test_a_failed_request_fails_only_its_own_caller():
    def flaky(request: Request):
        if "bad" in request.prompt:
            raise RuntimeError("model exploded")
        return "fine"

    engine = ScriptedEngine(script=flaky)
    scheduler = Scheduler()
    llm = LLM(scheduler, engine)
    results = await asyncio.gather(llm.generate("good"), llm.generate("bad"), return_exceptions=True)
    await scheduler.close()
    assert results[0].text == "fine"
    assert isinstance(results[1], EngineError) and "model exploded" in str(results[1])
    assert scheduler.stats.errors == 1


async def test_engine_crash_for_a_whole_batch_is_reported_to_every_caller():
    class Broken(ScriptedEngine):
        def generate(self, requests):
            raise MemoryError("out of memory")

    scheduler = Scheduler()
    llm = LLM(scheduler, Broken(script=upper))
    results = await asyncio.gather(llm.generate("a"), llm.generate("b"), return_exceptions=True)
    await scheduler.close()
    assert all(isinstance(r, EngineError) and "out of memory" in str(r) for r in results)


async def test_cache_answers_repeats_without_calling_the_engine(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    first_engine = ScriptedEngine(script=upper)
    first, _ = await run_examples(first_engine, n=10, cache=cache)
    second_engine = ScriptedEngine(script=lambda r: "WRONG")
    second, scheduler = await run_examples(second_engine, n=10, cache=cache)
    assert first == second
    assert second_engine.batch_sizes == [] and scheduler.stats.cache_hits > 0


async def test_cache_key_covers_sampling_and_seed(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    request = Request(prompt="p", sampling=Sampling(temperature=0.7, seed=1))
    cache.put_many([(request.cache_key("scripted:x"), "scripted:x", Response(texts=["one"]))])
    assert cache.get(request.cache_key("scripted:x")).text == "one"
    assert cache.get(request.with_sampling(seed=2).cache_key("scripted:x")) is None
    assert cache.get(request.cache_key("other:x")) is None


async def test_cache_survives_reopening(tmp_path):
    request = Request(prompt="p")
    first = ResponseCache(tmp_path / "c.sqlite")
    first.put_many([(request.cache_key("e"), "e", Response(texts=["kept"], prompt_tokens=3))])
    first.close()
    reopened = ResponseCache(tmp_path / "c.sqlite").get(request.cache_key("e"))
    assert reopened.text == "kept" and reopened.cached and reopened.prompt_tokens == 3


def test_request_needs_exactly_one_of_prompt_or_messages():
    with pytest.raises(ValueError):
        Request()
    with pytest.raises(ValueError):
        Request(prompt="a", messages=(("user", "b"),))


def test_unknown_sampling_parameter_is_rejected():
    with pytest.raises(TypeError, match="max_new_tokens"):
        Sampling.make(max_new_tokens=3)


async def test_a_lone_request_with_other_sampling_waits_at_most_the_age_limit():
    """40 examples keep a full batch of one sampling setting queued for 60 batches; one request with
    another setting, queued before the first batch, is served within AGE_LIMIT batches (the largest
    group alone served it last)."""
    from ragbench._scheduler import AGE_LIMIT

    served_in: dict[str, int] = {}

    def record(request: Request) -> str:
        served_in[request.prompt] = len(engine.batch_sizes) - 1  # the batch being answered
        return "ok"

    engine = ScriptedEngine(script=record, batch_size=8)
    scheduler = Scheduler()
    llm = LLM(scheduler, engine)

    async def busy(i: int) -> None:
        for step in range(12):
            await llm.generate(f"busy {i} step {step}", max_tokens=8)

    await asyncio.gather(llm.generate("lone", max_tokens=9), *(busy(i) for i in range(40)))
    await scheduler.close()
    assert len(engine.batch_sizes) == 61  # 480 busy calls in batches of 8, and the lone one
    assert served_in["lone"] <= AGE_LIMIT and scheduler.stats.max_wait_batches <= AGE_LIMIT
