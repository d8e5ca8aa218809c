"""The `umbrela` metric's judge requests through a real HTTP judge on 127.0.0.1 (the openai engine behind a run's
scheduler, ragbench._engines.hosted.openai): every body is the one castorini's umbrela 0.0.7 sent
(tests/data/umbrela/umbrela_calls.json), field for field. The chats, grades and values: test_umbrela.py."""

from __future__ import annotations

import asyncio
import json

import pytest
from test_engine_openai import FAST, FakeServer, error
from test_umbrela import FIXTURE, REPLIES, RUNS, example_of, expected_values, passage_of

from ragbench._engines.hosted.openai import OpenAIEngine
from ragbench._llm import LLM
from ragbench._scheduler import Scheduler
from ragbench.metrics.umbrela.metric import Umbrela
from ragbench.testing import make_context


@pytest.mark.parametrize("name", ["bing-q1", "bing-q2", "basic-q2", "o4-q1", "gpt5-q1"])
def test_the_openai_engine_sends_umbrelas_bodies(name):
    """Through a real HTTP judge on 127.0.0.1 and a judge with no options, every request body is the one umbrela sent,
    field for field and number for number (its penalties included), in umbrela's order, and the HTTP 400 reads as
    umbrela reads it."""
    run = RUNS[name]

    def reply(body):
        return REPLIES[passage_of(body["messages"][-1]["content"])]

    server = FakeServer(reply=reply)
    server.then(
        *(error(400, "bad request") if call["reply"] == FIXTURE["bad_request"] else {} for call in run["calls"])
    )
    engine = OpenAIEngine(run["model"], base_url=server.base_url, concurrency=1, **FAST)

    async def go() -> dict:
        scheduler = Scheduler()
        try:
            ctx = make_context("demo", judges=[LLM(scheduler, engine)])
            example, prediction = example_of(run["qid"])
            return await Umbrela(prompt_type=run["prompt_type"]).score(example, prediction, ctx)
        finally:
            await scheduler.close()
            await engine.aclose()

    try:
        scores = asyncio.run(go())
    finally:
        server.stop()
    sent = [json.dumps(r["body"], sort_keys=True) for r in server.requests]  # JSON text: 1 is not 1.0, 0 not 0.0
    assert sent == [json.dumps(call["body"], sort_keys=True) for call in run["calls"]]
    assert scores == expected_values(run)
