"""Provider prompt caching: each vendor's cached and written prompt tokens, read off the usage its fake server on
127.0.0.1 sends, kept per call (the Response, the trace step, the sample record) and priced at their own rates
(`cached_prompt`, `cache_write`, `cache_write_1h`; Anthropic's documented multipliers where its entry gives none,
said in `price_note`; another vendor's missing cached price no money figure, never the full rate unsaid); and
the `anthropic` engine's `prompt_cache` option, which marks the system prompt and the last tool and nothing
else, and leaves every request as it was when off."""

from __future__ import annotations

import asyncio
import json
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_engine_openai import FAST, FakeServer, chat, chat_payload, generate
from test_engine_openai_tools import SEARCH

from conftest import needs
from ragbench._config.run_config import RunConfig
from ragbench._cost.call_cost import ModelCostTally
from ragbench._cost.prices import ModelPrices, read_price_table
from ragbench._engines.hosted.anthropic import AnthropicEngine
from ragbench._engines.hosted.batch_anthropic import AnthropicBatches
from ragbench._engines.hosted.gemini import GeminiEngine
from ragbench._engines.hosted.openai import OpenAIEngine
from ragbench._llm import LLM
from ragbench._scheduler import Scheduler
from ragbench._values.response_checks import response_problem
from ragbench.api import ConfigError, SampleRecord
from ragbench.api.engines import Request, Response, Sampling

COUNTS = st.integers(0, 200_000)


@contextmanager
def fake_server():
    fake = FakeServer()
    try:
        yield fake
    finally:
        fake.stop()


def openai_usage(prompt: int, cached: int, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


# -- each vendor's counts, read and kept -----------------------------------------------------------


def test_openai_chat_completions_cached_tokens_are_read():
    with fake_server() as server:
        engine = OpenAIEngine("gpt-4o-mini", base_url=server.base_url, **FAST)

        @settings(max_examples=10, deadline=None)
        @given(uncached=COUNTS, cached=COUNTS, completion=COUNTS)
        def check(uncached: int, cached: int, completion: int) -> None:
            usage = openai_usage(uncached + cached, cached, completion)
            server.answer = lambda path, body: chat_payload(body) | {"usage": usage}
            response = generate(engine, chat())
            assert (response.prompt_tokens, response.cached_prompt_tokens) == (uncached + cached, cached)
            assert response.cache_write_tokens == 0 and response.completion_tokens == completion

        check()


def test_openai_responses_api_cached_tokens_are_read():
    with fake_server() as server:
        engine = OpenAIEngine("gpt-4.1", base_url=server.base_url, api="responses", **FAST)
        output = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Paris"}]}
        usage = {"input_tokens": 900, "output_tokens": 7, "total_tokens": 907}
        usage |= {"input_tokens_details": {"cached_tokens": 768}}
        server.then({"status": 200, "body": {"id": "r", "object": "response", "status": "completed", "model": "m"}
                     | {"output": [output], "usage": usage}})  # fmt: skip
        response = generate(engine, chat())
        assert (response.prompt_tokens, response.cached_prompt_tokens, response.text) == (900, 768, "Paris")


@needs("anthropic")
def test_anthropic_cache_reads_and_writes_are_read_with_the_one_hour_share():
    with fake_server() as server:
        engine = AnthropicEngine("claude-test", base_url=server.base_url.removesuffix("/v1"), **FAST)

        @settings(max_examples=8, deadline=None)
        @given(fresh=COUNTS, read=COUNTS, five=COUNTS, hour=COUNTS, split=st.booleans())
        def check(fresh: int, read: int, five: int, hour: int, split: bool) -> None:
            usage = {"input_tokens": fresh, "output_tokens": 3, "cache_read_input_tokens": read}
            usage["cache_creation_input_tokens"] = five + hour
            if split:  # the split is absent from older answers: every write then the 5-minute cache's
                usage["cache_creation"] = {"ephemeral_5m_input_tokens": five, "ephemeral_1h_input_tokens": hour}
            server.answer = lambda path, body: anthropic_message(usage)
            response = generate(engine, chat())
            assert response.prompt_tokens == fresh + read + five + hour
            assert (response.cached_prompt_tokens, response.cache_write_tokens) == (read, five + hour)
            assert response.cache_write_1h_tokens == (hour if split else 0)

        check()


@needs("google.genai")
def test_gemini_cached_content_tokens_are_read():
    with fake_server() as server:
        engine = GeminiEngine("gemini-test", base_url=server.base_url.removesuffix("/v1"), **FAST)
        usage = {"promptTokenCount": 5000, "cachedContentTokenCount": 4096, "candidatesTokenCount": 3}
        body = {"candidates": [{"index": 0, "content": {"role": "model", "parts": [{"text": "Paris"}]}}]}
        body["candidates"][0]["finishReason"] = "STOP"
        server.then({"status": 200, "body": body | {"usageMetadata": usage}})
        response = generate(engine, chat())
        assert (response.prompt_tokens, response.cached_prompt_tokens) == (5000, 4096)


def anthropic_message(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "text", "text": "Paris"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


@pytest.mark.parametrize(
    "counts",
    [
        {"prompt_tokens": 10, "cached_prompt_tokens": 11},
        {"prompt_tokens": 10, "cached_prompt_tokens": 6, "cache_write_tokens": 5},
        {"prompt_tokens": 10, "cache_write_tokens": 2, "cache_write_1h_tokens": 3},
        {"prompt_tokens": 10, "cached_prompt_tokens": -1},
    ],
)
def test_cache_counts_that_are_no_part_of_the_prompt_are_no_answer(counts):
    """More cached than sent would price a call below nothing: the answer is the engine's error, never priced."""
    problem = response_problem(Response(texts=["x"], **counts), chat())
    assert problem is not None and ("more than" in problem or "whole number" in problem)


def test_the_counts_reach_the_trace_step_the_record_and_the_cost_and_zeros_stay_out_of_the_step():
    def traced(server: FakeServer, cached: int) -> dict[str, Any]:
        server.answer = lambda path, body: chat_payload(body) | {"usage": openai_usage(10, cached, 2)}
        trace: list[Any] = []
        scheduler = Scheduler()
        llm = LLM(scheduler, OpenAIEngine("gpt-4o-mini", base_url=server.base_url, **FAST), trace=trace)

        async def go() -> None:
            try:
                await llm.chat([{"role": "user", "content": "Who?"}])
            finally:
                await scheduler.close()
                await llm.engine.aclose()

        asyncio.run(go())
        counted = scheduler.stats.to_dict()  # results.json's `cost` counts
        assert (counted["cached_prompt_tokens"], counted["cache_write_tokens"]) == (cached, 0)
        return dict(trace[0].to_dict())

    with fake_server() as server:
        cached, plain = traced(server, 8), traced(server, 0)
    assert cached["cached_prompt_tokens"] == 8 and cached["prompt_tokens"] == 10
    assert "cache_write_tokens" not in cached and "cache_write_1h_tokens" not in cached
    (read,) = SampleRecord.from_dict({"id": "1", "trace": [json.loads(json.dumps(cached))]}).trace
    assert read.cached_prompt_tokens == 8
    assert not {"cached_prompt_tokens", "cache_write_tokens", "cache_write_1h_tokens"} & set(plain)
    kept = Response(texts=["x"], prompt_tokens=10, cached_prompt_tokens=8).to_dict()
    assert Response.from_dict(kept).cached_prompt_tokens == 8 and "cache_write_tokens" not in kept


# -- priced at their own rates ------------------------------------------------------------------------


def step(prompt: int, completion: int, read: int = 0, write: int = 0, hour: int = 0) -> Any:
    counts = {"cached_prompt_tokens": read, "cache_write_tokens": write, "cache_write_1h_tokens": hour}
    return {
        "kind": "llm",
        "name": "answer",
        "request": {},
        "prompt_tokens": prompt,
        "completion_tokens": completion,
    } | (counts)


def model_cost(model: str, steps: list[Any], table: dict[str, Any] | None = None, **args: Any) -> dict[str, Any]:
    config = RunConfig.of(tasks=["demo"], model=model, model_args=args)
    tally = ModelCostTally(ModelPrices(config.models, config.judging, table or {}))
    tally.add(SampleRecord.from_dict({"index": 0, "id": "1", "trace": steps}))  # as the run's readers read a line
    return dict(tally.sections()["model_cost"])


CALLS = st.lists(
    st.tuples(COUNTS, COUNTS, COUNTS, COUNTS, COUNTS).map(
        lambda c: (c[0] + c[1] + c[2] + c[3], c[4], c[1], c[2] + c[3], c[3])
    ),
    min_size=1,
    max_size=4,
)  # per call: prompt (fresh + read + 5-minute writes + 1-hour writes), completion, read, writes, 1-hour writes


@settings(max_examples=60, deadline=None)
@given(calls=CALLS)
def test_anthropic_reads_and_writes_are_priced_by_the_documented_multipliers_and_said_so(calls):
    cost = model_cost(
        "anthropic:claude-x", [step(*c) for c in calls], {"claude-x": {"prompt": 3.0, "completion": 15.0}}
    )
    prompt, completion, read, write, hour = (sum(c[i] for c in calls) for i in range(5))
    fresh = prompt - read - write
    expected = (fresh * 3.0 + completion * 15.0 + read * 0.3 + (write - hour) * 3.75 + hour * 6.0) / 1e6
    assert cost["usd"] == pytest.approx(expected, abs=2e-6)
    if read or write:
        cache = cost["prompt_cache"]
        assert (cache["read_tokens"], cache["write_tokens"], cache["write_1h_tokens"]) == (read, write, hour)
        uncached = (prompt * 3.0 + completion * 15.0) / 1e6
        assert cache["usd_saved"] == pytest.approx(uncached - expected, abs=2e-6)
        assert "Anthropic's multipliers" in cost["price_note"] and ("cached_prompt 0.1x" in cost["price_note"]) == (
            read > 0
        )
    else:
        assert "prompt_cache" not in cost and "price_note" not in cost


@settings(max_examples=40, deadline=None)
@given(calls=CALLS)
def test_a_tables_cache_prices_are_used_and_batch_halves_them(calls):
    table = {"claude-x": {"prompt": 3.0, "completion": 15.0, "cached_prompt": 0.2, "cache_write": 4.0,
                          "cache_write_1h": 7.0}}  # fmt: skip
    steps = [step(*c) for c in calls]
    prompt, completion, read, write, hour = (sum(c[i] for c in calls) for i in range(5))
    expected = (
        (prompt - read - write) * 3.0 + completion * 15.0 + read * 0.2 + (write - hour) * 4.0 + hour * 7.0
    ) / 1e6
    assert model_cost("anthropic:claude-x", steps, table)["usd"] == pytest.approx(expected, abs=2e-6)
    batch = model_cost("anthropic:claude-x", steps, table, batch=True)
    assert batch["usd"] == pytest.approx(expected / 2, abs=2e-6) and "price_note" not in batch


def test_openais_built_in_cached_input_price_prices_its_cached_tokens():
    cost = model_cost("openai:gpt-4o-mini", [step(10_000, 100, read=8_000)])
    assert cost["usd"] == round((2_000 * 0.15 + 100 * 0.60 + 8_000 * 0.075) / 1e6, 6)
    assert cost["prompt_cache"]["usd_saved"] == round(8_000 * (0.15 - 0.075) / 1e6, 6)
    assert cost["price_per_million"]["cached_prompt"] == 0.075 and "price_note" not in cost


@pytest.mark.parametrize("model", ["openai:gpt-4-turbo", "gemini:gemini-x", "vllm:/m"])
def test_cached_tokens_without_their_price_have_no_money_figure_saying_which_price_is_missing(model):
    table = {model: {"prompt": 1.0, "completion": 2.0}}
    cost = model_cost(model, [step(1000, 10, read=600)], table)
    assert cost["usd"] is None
    assert cost["usd_note"] == (
        f"{model} reported 600 prompt tokens read from its prompt cache but its price has no cached_prompt: "
        "add it with --price-table FILE"
    )
    assert cost["prompt_cache"] == {"read_tokens": 600, "write_tokens": 0, "write_1h_tokens": 0, "usd_saved": None}
    assert model_cost(model, [step(1000, 10)], table)["usd"] == round(
        (1000 + 20) / 1e6, 6
    )  # no cache: every prompt token at the prompt price


def test_price_table_takes_cache_prices_and_refuses_bad_ones(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("gpt-5: {prompt: 1.25, completion: 10, cached_prompt: 0.125}\n")
    assert read_price_table(good)["gpt-5"]["cached_prompt"] == 0.125
    for entry in ("{prompt: 1, completion: 2, cached_prompt: -1}", "{prompt: 1, completion: 2, cache_read: 0.1}",
                  "{prompt: 1, cached_prompt: 0.1}"):  # fmt: skip
        bad = tmp_path / "bad.yaml"
        bad.write_text(f"m: {entry}\n")
        with pytest.raises(ConfigError, match="cached_prompt, cache_write, cache_write_1h"):
            read_price_table(bad)


# -- the anthropic engine's prompt_cache option ---------------------------------------------------------

TOOLS = [SEARCH, {"type": "function", "function": {"name": "get_document", "parameters": {"type": "object"}}}]


def agent_turn() -> Request:
    return Request.chat(
        [{"role": "system", "content": "You search."}, {"role": "user", "content": "Who?"}],
        Sampling.make(max_tokens=9),
        tools=TOOLS,
    )


def marked(value: Any, where: str = "") -> list[str]:
    """Where `cache_control` is in a request body, as paths."""
    if isinstance(value, dict):
        found = [where] if "cache_control" in value else []
        return found + [p for k, v in value.items() for p in marked(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [p for n, v in enumerate(value) for p in marked(v, f"{where}[{n}]")]
    return []


@needs("anthropic")
@pytest.mark.parametrize(
    ("option", "marker"), [(True, {"type": "ephemeral"}), ("1h", {"type": "ephemeral", "ttl": "1h"})]
)
def test_prompt_cache_marks_the_system_block_and_the_last_tool_and_nothing_else(option, marker):
    with fake_server() as server:
        server.answer = lambda path, body: anthropic_message({"input_tokens": 1, "output_tokens": 1})
        base = server.base_url.removesuffix("/v1")
        generate(AnthropicEngine("claude-test", base_url=base, **FAST), agent_turn())
        cached = AnthropicEngine("claude-test", base_url=base, prompt_cache=option, **FAST)
        generate(cached, agent_turn())
        plain, sent = (request["body"] for request in server.requests)
    assert marked(plain) == [] and "prompt_cache" not in json.dumps(plain)
    assert sorted(marked(sent)) == [".system[0]", ".tools[1]"]
    assert sent["system"] == [{"type": "text", "text": "You search.", "cache_control": marker}]
    assert sent["tools"][1]["cache_control"] == marker
    assert {**sent, "system": plain["system"], "tools": plain["tools"]} == plain
    assert [{k: v for k, v in tool.items() if k != "cache_control"} for tool in sent["tools"]] == plain["tools"]
    assert cached.engine_id == AnthropicEngine("claude-test", base_url=base).engine_id  # answers the same


@needs("anthropic")
def test_prompt_cache_marks_batch_requests_too_and_refuses_other_values():
    engine = AnthropicEngine("claude-test", base_url="http://127.0.0.1:9", prompt_cache=True, batch=True)
    _, line = AnthropicBatches(engine, engine.prompt_cache).line(agent_turn(), "c1")
    assert sorted(marked(line["params"])) == [".system[0]", ".tools[1]"]
    for value in ("2h", 1, "yes"):
        with pytest.raises(ConfigError, match="prompt_cache must be true, false, 5m or 1h"):
            AnthropicEngine("claude-test", prompt_cache=value)


def test_a_call_files_reference_to_the_step_gives_the_cache_counts_back():
    """A call file refers to the trace step for what the step holds: the counts come back from it (replay)."""
    from ragbench._replay.call_refs import step_response_data
    from ragbench.api import Step

    held = Step(kind="llm", name="a", request={}, response={"texts": ["x"]}, prompt_tokens=10, cached_prompt_tokens=8)
    assert Response.from_dict(step_response_data(held.to_dict())).cached_prompt_tokens == 8


def test_the_console_line_says_what_the_prompt_cache_read_wrote_and_saved():
    from ragbench._cost.cost_lines import model_cost_lines
    from ragbench._reports.results.schema import Results

    def line(cost: dict[str, Any]) -> str:
        empty: dict[str, Any] = {}
        results = Results(results={}, details={}, counts={}, complete=True, cost=empty, config=empty, versions={})
        results.model_cost = {"demo": cost}  # type: ignore[dict-item]
        [only] = model_cost_lines(results)
        return only

    cached = line(model_cost("openai:gpt-4o-mini", [step(10_000, 100, read=8_000)]))
    assert "tokens 10000 in / 100 out (8000 read from the prompt cache, 0 written, $0.0006 saved), $0.0010" in cached
    assert "prompt cache" not in line(model_cost("openai:gpt-4o-mini", [step(10, 1)]))
