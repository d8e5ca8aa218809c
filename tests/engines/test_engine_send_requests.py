"""`ragbench.testing.send_requests`: an engine's requests sent at once through one scheduler, as a run's examples send
their calls: batches of at most the engine's size, each answer (or failure) in its request's place."""

from __future__ import annotations

import asyncio

from ragbench.api import EngineError
from ragbench.api.engines import Request, Response, Sampling
from ragbench.testing import ScriptedLLM, send_requests


def answer_or_fail(request: Request) -> str:
    if "bad" in (request.prompt or ""):
        raise EngineError("the script refuses this one")
    return f"re {request.prompt}"


def test_a_batch_engine_gets_batches_of_at_most_its_size_and_each_answer_in_its_place():
    llm = ScriptedLLM(answer_or_fail, batch_size=3)
    prompts = ["a", "b", "bad", "c", "d", "e", "f"]
    answers = asyncio.run(send_requests(llm.engine, [Request(p, sampling=Sampling.make()) for p in prompts]))
    assert [a.text if isinstance(a, Response) else "failed" for a in answers] == [
        "re a",
        "re b",
        "failed",
        "re c",
        "re d",
        "re e",
        "re f",
    ]
    assert isinstance(answers[2], EngineError) and "refuses" in str(answers[2])
    assert sorted(llm.batch_sizes, reverse=True) == [3, 3, 1]


def test_identical_requests_share_one_call():
    llm = ScriptedLLM(answer_or_fail)
    answers = asyncio.run(send_requests(llm.engine, [Request("same", sampling=Sampling.make())] * 4))
    assert [a.text for a in answers if isinstance(a, Response)] == ["re same"] * 4
    assert len(llm.requests) == 1
