"""Every token a vendor bills is counted: an answer ragbench refused (a body it cannot read, a response_problem),
whether the call then succeeded or failed, is the call's cost (`Billed`, `EngineError.billed`): in the answer's
tokens, in the failed call's traced step, in the attempt's counts, the --max-cost spending and `model_cost`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_engine_anthropic import echo, message
from test_engine_gemini import answer
from test_engine_openai import FAST, FakeServer, chat, chat_payload, generate, server  # noqa: F401 (fixture)

from conftest import needs
from ragbench._config.judging import RunJudging
from ragbench._config.models import RunModels
from ragbench._cost.cost_lines import model_cost_lines
from ragbench._cost.prices import ModelPrices
from ragbench._cost.spending_cap import SpendingCap
from ragbench._cost.token_usage import TokenUsage
from ragbench._reports.results.schema import Results
from ragbench._scheduler import CallStats, Scheduler
from ragbench._types import Step
from ragbench._values.billed import Billed
from ragbench._values.engine_errors import EngineError
from ragbench._values.llm_responses import Response
from ragbench.testing import load_engine
from support.helpers import run

USAGE = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}  # test_engine_openai's chat answers'


def refused(prompt: int, completion: int) -> dict[str, Any]:
    """A 200 whose usage reads and which is no completion (no choices): billed, refused, asked again."""
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    return {"status": 200, "body": {"object": "chat.completion", "choices": [], "usage": usage}}


def openai(server: FakeServer, **options: Any) -> Any:
    return load_engine("openai:m", base_url=server.base_url, **{**FAST, **options})


def test_the_tokens_of_answers_refused_before_one_taken_are_the_calls(server):
    server.then(refused(100, 10), refused(200, 20))
    response = generate(openai(server), chat("hi"))
    assert response.text == "echo0: hi" and len(server.requests) == 3
    assert (response.prompt_tokens, response.completion_tokens) == (311, 33)


def test_a_call_that_fails_after_billed_refusals_carries_their_tokens(server):
    server.then(refused(100, 10), refused(200, 20), refused(300, 30))
    with pytest.raises(EngineError, match=r"unreadable response .*\(3 attempts\)") as failed:
        generate(openai(server, max_retries=2), chat())
    assert failed.value.billed == Billed(3, 600, 60)


def test_a_refusal_with_no_usage_bills_nothing(server):
    server.then(*[{"status": 200, "body": b"<html>proxy error</html>"}] * 2)
    with pytest.raises(EngineError) as failed:
        generate(openai(server, max_retries=1), chat())
    assert failed.value.billed is None


def test_an_http_error_after_a_billed_refusal_carries_its_tokens(server):
    server.then(refused(100, 10), {"status": 400, "body": {"error": {"message": "bad", "type": "t", "code": None}}})
    with pytest.raises(EngineError, match="HTTP 400") as failed:
        generate(openai(server), chat())
    assert failed.value.billed == Billed(1, 100, 10)


def test_a_response_problem_is_the_calls_error_with_its_billed_tokens(server):
    """A readable answer the scheduler refuses (an unknown finish reason) was billed: its error carries it."""
    server.answer = lambda path, body: {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "weird"}],
        "usage": USAGE,
    }
    engine = openai(server)

    async def run() -> tuple[BaseException | None, CallStats]:
        scheduler = Scheduler()
        try:
            await scheduler.submit(engine, chat())
        except EngineError as exc:
            return exc, scheduler.stats
        finally:
            await scheduler.close()
            await engine.aclose()
        return None, scheduler.stats

    result, stats = asyncio.run(run())
    assert isinstance(result, EngineError) and "answered no valid response" in str(result)
    assert result.billed == Billed(1, 11, 3)
    assert (stats.errors, stats.prompt_tokens, stats.completion_tokens) == (1, 11, 3)  # run.json's attempt cost


def test_the_spending_cap_spends_what_a_failed_call_was_billed():
    engine = object()
    cap = SpendingCap(1.0, {id(engine): {"prompt": 1.0, "completion": 2.0}}, lambda: None)
    failed = EngineError("x")
    failed.billed = Billed(2, 300_000, 100_000)
    cap.settle(engine, chat(), failed)
    cap.settle(engine, chat(), EngineError("nothing billed"))
    assert cap.spent == pytest.approx(0.5)


def test_a_replica_that_failed_after_billed_refusals_bills_the_call_the_next_one_answers(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    first, live, second, third = FakeServer(), FakeServer(), FakeServer(), FakeServer()
    first.then(refused(100, 10), refused(200, 20))
    second.then(refused(1, 1), refused(2, 2))
    third.then(refused(1, 1), refused(2, 2))
    try:
        engine = load_engine("openai:m", base_url=[first.base_url, live.base_url], max_retries=1, **FAST)
        answered = generate(engine, chat("hi"))  # the first replica fails it; the second answers
        engine = load_engine("openai:m", base_url=[second.base_url, third.base_url], max_retries=1, **FAST)
        with pytest.raises(EngineError, match="every replica failed") as failed:
            generate(engine, chat("hi"))
    finally:
        for fake in (first, live, second, third):
            fake.stop()
    assert (answered.prompt_tokens, answered.completion_tokens) == (311, 33)
    assert failed.value.billed == Billed(4, 6, 6)


@needs("anthropic")
def test_anthropic_a_refused_message_is_billed():
    usage = {"input_tokens": 7, "output_tokens": 1, "cache_read_input_tokens": 2}
    fake = FakeServer(answer=echo)
    try:
        fake.then({"status": 200, "headers": {}, "body": {**message([]), "content": 3, "usage": usage}})
        engine = load_engine("anthropic:claude-test", base_url=fake.base_url.removesuffix("/v1"), **FAST)
        response = generate(engine, chat())
    finally:
        fake.stop()
    assert len(fake.requests) == 2
    assert (response.prompt_tokens, response.completion_tokens, response.cached_prompt_tokens) == (15 + 9, 3 + 1, 6)


@needs("google.genai")
def test_gemini_a_refused_answer_is_billed():
    fake = FakeServer(answer=lambda path, body: answer([{"text": "ok"}]))
    try:
        fake.then({"status": 200, "headers": {}, "body": {**answer([{"text": "x"}]), "candidates": [{"index": 0}]}})
        engine = load_engine("gemini:gemini-test", base_url=fake.base_url.removesuffix("/v1"), **FAST)
        response = generate(engine, chat())
    finally:
        fake.stop()
    assert len(fake.requests) == 2 and (response.prompt_tokens, response.completion_tokens) == (22, 10)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    billed=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**5)), max_size=3),
    answered=st.booleans(),
)
def test_the_cost_is_the_sum_of_every_billed_answer(server, billed, answered):
    """Any refusals then an answer (or none: the call fails): the call's tokens are every answer's the vendor
    billed, whether it is the answer or the error that carries them."""
    server.script.clear()
    server.then(*(refused(prompt, completion) for prompt, completion in billed))
    if not answered:
        server.then({"status": 200, "body": b"<html>proxy error</html>"})
    engine = openai(server, max_retries=len(billed))  # the refusals, then the answer or one more refusal
    prompt = sum(p for p, _ in billed) + 11 * answered
    completion = sum(c for _, c in billed) + 3 * answered
    try:
        result: Response | Billed | None = generate(engine, chat("hi"))
    except EngineError as exc:
        result = exc.billed
    assert answered == isinstance(result, Response)
    counted = (result.prompt_tokens, result.completion_tokens) if result is not None else (0, 0)
    assert counted == (prompt, completion)


def test_model_cost_counts_a_failed_calls_billed_tokens_and_says_so():
    usage = TokenUsage()
    usage.add(Step(kind="llm", name="g", request={}, prompt_tokens=10, completion_tokens=1), None)
    usage.add(Step(kind="llm", name="g", request={}, error="x", prompt_tokens=90, completion_tokens=9), None)
    usage.add(Step(kind="llm", name="g", request={}, error="y"), None)  # nothing billed
    assert (usage.errors, usage.tokens[None][1:3]) == (2, [100, 10])
    assert usage.unanswered == [1, 90, 9]
    figures = usage.figures(
        ModelPrices(RunModels(model="openai:m"), RunJudging(), {"openai:m": {"prompt": 1.0, "completion": 1.0}})
    )
    assert figures["billed_no_answer"] == {"calls": 1, "prompt_tokens": 90, "completion_tokens": 9}
    assert figures["usd"] == pytest.approx(110 / 1e6)


def test_a_runs_failed_calls_bill_their_refused_answers_in_model_cost_and_run_json(server, tmp_path, monkeypatch):
    """End to end: every answer refused (an unknown finish reason), every example failed: what the vendor billed
    is the model's cost, counted apart as billed with no answer, and the attempt's tokens in run.json."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    server.answer = lambda path, body: {
        **chat_payload(body),
        "choices": [{**chat_payload(body)["choices"][0], "finish_reason": "weird"}],
    }
    table = tmp_path / "prices.yaml"
    table.write_text("'openai:m': {prompt: 1.0, completion: 1.0}\n")
    sent = {"model": "openai:m", "model_args": {"base_url": server.base_url, **FAST}, "price_table": str(table)}
    results = run(tmp_path, tasks=["demo"], system="closed_book", limit=2, **sent)
    cost = results["model_cost"]["demo"]
    assert cost["errors"] == cost["calls"] == 2
    assert cost["billed_no_answer"] == {"calls": 2, "prompt_tokens": 22, "completion_tokens": 6}
    assert (cost["prompt_tokens"], cost["completion_tokens"], cost["usd"]) == (22, 6, 28 / 1e6)
    lines = model_cost_lines(Results.from_dict(results))  # the console's and report.md's
    assert lines == [
        "demo: the system's model openai:m: 2 calls (0 from the cache, 2 failed, 2 of them billed with no answer: 22 in / 6 out), tokens 22 in / 6 out, $0.0000"
    ]
    attempt = json.loads((tmp_path / "run" / "run.json").read_text())["attempts"][-1]
    assert (attempt["prompt_tokens"], attempt["completion_tokens"]) == (22, 6)
