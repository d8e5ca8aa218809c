"""The `anthropic` engine: Anthropic's own SDK against a fake Messages API server on 127.0.0.1 (no network):
requests map onto the body, answers (text, tool use, stop reasons, usage) back into Responses, retries and
failures behave as the openai engine's, and the key stays out of everything shown."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from typing import Any

import pytest

from ragbench._engines.anthropic import AnthropicEngine
from ragbench._errors import ConfigError
from ragbench._registry import installed_registry
from ragbench._scheduler import Scheduler
from ragbench._values.llm_calls import EngineError, Request, RequestError, Response, Sampling
from test_engine_openai import FAST, FakeServer

pytest.importorskip("anthropic")

KEY_ENV = "RAGBENCH_TEST_ANTHROPIC_KEY"
SECRET = "sk-ant-test-Zq9SECRETvalue0123456789"
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
}


def message(content: list[dict[str, Any]], stop_reason: str = "end_turn", **extra: Any) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 11, "output_tokens": 3, "cache_read_input_tokens": 4},
        **extra,
    }


def echo(path: str, body: dict[str, Any]) -> dict[str, Any]:
    last = body["messages"][-1]["content"]
    return message([{"type": "text", "text": f"echo: {last if isinstance(last, str) else json.dumps(last)}"}])


@pytest.fixture
def server():
    fake = FakeServer(answer=echo)
    yield fake
    fake.stop()


@pytest.fixture(autouse=True)
def no_ambient_anthropic_env(monkeypatch):
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", KEY_ENV):
        monkeypatch.delenv(name, raising=False)


def engine(server: FakeServer, **options: Any) -> AnthropicEngine:
    return AnthropicEngine("claude-test", base_url=server.base_url.removesuffix("/v1"), **{**FAST, **options})


def generate(engine: AnthropicEngine, request: Request) -> Response:
    async def go() -> Response:
        try:
            return await engine.agenerate_one(request)
        finally:
            await engine.aclose()

    return asyncio.run(go())


def chat(text: str = "Capital of France?", **sampling: Any) -> Request:
    return Request.chat(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}], Sampling.make(**sampling)
    )


def reply(body: dict[str, Any], status: int = 200, **headers: str) -> dict[str, Any]:
    return {"status": status, "headers": headers, "body": body}


def error(status: int, message: str, **headers: str) -> dict[str, Any]:
    return reply({"type": "error", "error": {"type": "test_error", "message": message}}, status, **headers)


# -- request mapping ------------------------------------------------------------------------


def test_chat_request_maps_onto_the_messages_body(server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    generate(engine(server, api_key_env=KEY_ENV), chat(max_tokens=7, temperature=0.5, top_p=0.9, stop=["\n"], seed=3))
    [got] = server.requests
    assert got["path"] == "/v1/messages"
    headers = {name.lower(): value for name, value in got["headers"].items()}
    assert SECRET in (headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer "))
    assert got["body"] == {
        "model": "claude-test",
        "max_tokens": 7,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "Capital of France?"}],
        "temperature": 0.5,
        "top_p": 0.9,
        "stop_sequences": ["\n"],
    }


def test_top_p_of_one_is_left_out_and_a_prompt_is_one_user_turn(server):
    generate(engine(server), Request(prompt="Say hi", sampling=Sampling(max_tokens=5)))
    body = server.requests[0]["body"]
    assert body["messages"] == [{"role": "user", "content": "Say hi"}]
    assert "top_p" not in body and "system" not in body


def test_no_key_header_when_the_key_variable_is_unset(server):
    generate(engine(server), chat())
    headers = {name.lower() for name in server.requests[0]["headers"]}
    assert "x-api-key" not in headers and "authorization" not in headers


def test_extra_model_args_are_sent_in_the_body_and_key_the_cache(server):
    plain, topk = engine(server), engine(server, top_k=40)
    generate(topk, chat())
    assert server.requests[0]["body"]["top_k"] == 40
    assert plain.engine_id != topk.engine_id and "top_k=40" in topk.engine_id


def test_reserved_fields_and_secrets_are_refused_as_model_args():
    with pytest.raises(ConfigError, match="stop_sequences"):
        AnthropicEngine("m", stop_sequences=["x"])
    with pytest.raises(ConfigError, match="secrets are not accepted") as caught:
        AnthropicEngine("m", api_key="sk-ant-leak-123456")
    assert "leak" not in str(caught.value)


def test_n_and_logprobs_are_request_faults():
    for sampling in ({"n": 2}, {"logprobs": 3}):
        with pytest.raises(RequestError, match="Messages API takes no"):
            generate(AnthropicEngine("m", base_url="http://127.0.0.1:9"), chat(**sampling))


# -- tools ----------------------------------------------------------------------------------

CALLED = [
    {"role": "user", "content": "Who wrote it?"},
    {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {"id": "toolu_0", "type": "function", "function": {"name": "search", "arguments": '{"query":"a"}'}},
            {"id": "toolu_1", "type": "function", "function": {"name": "search", "arguments": '{"query":"b"}'}},
        ],
    },
    {"role": "tool", "tool_call_id": "toolu_0", "content": "[1] Ann"},
    {"role": "tool", "tool_call_id": "toolu_1", "content": "[2] Bob"},
]


def test_tools_tool_choice_and_tool_turns_go_out_in_anthropic_form(server):
    generate(engine(server), Request.chat(CALLED, tools=[SEARCH], tool_choice="search"))
    body = server.requests[0]["body"]
    assert body["tools"] == [
        {
            "name": "search",
            "description": "Search.",
            "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
        }
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "search"}
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_0", "name": "search", "input": {"query": "a"}},
                {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"query": "b"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_0", "content": "[1] Ann"},
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "[2] Bob"},
            ],
        },
    ]


@pytest.mark.parametrize(("choice", "sent"), [("auto", "auto"), ("none", "none"), ("required", "any")])
def test_tool_choices_map_onto_anthropics_types(server, choice, sent):
    generate(engine(server), Request.chat(CALLED[:1], tools=[SEARCH], tool_choice=choice))
    assert server.requests[0]["body"]["tool_choice"] == {"type": sent}


def test_tool_use_blocks_come_back_as_tool_calls(server):
    server.then(
        reply(
            message(
                [
                    {"type": "text", "text": "Searching."},
                    {"type": "tool_use", "id": "toolu_9", "name": "search", "input": {"query": "Ann é"}},
                ],
                "tool_use",
            )
        )
    )
    response = generate(engine(server), Request.chat(CALLED[:1], tools=[SEARCH]))
    assert response.text == "Searching."
    [call] = response.tool_calls
    assert (call.id, call.name, call.arguments) == ("toolu_9", "search", {"query": "Ann é"})
    assert response.finish_reason == "tool_calls" and response.items is None


def test_thinking_blocks_are_kept_as_items_and_sent_back_as_they_were(server):
    blocks = [
        {"type": "thinking", "thinking": "Look it up.", "signature": "sig=="},
        {"type": "tool_use", "id": "toolu_9", "name": "search", "input": {"query": "x"}},
    ]
    server.then(reply(message(blocks, "tool_use")))
    first = generate(engine(server), Request.chat(CALLED[:1], tools=[SEARCH]))
    assert json.loads(first.items or "null") == blocks
    turn = {"role": "assistant", "content": "", "tool_calls": [first.tool_calls[0].to_dict()], "items": first.items}
    result = {"role": "tool", "tool_call_id": "toolu_9", "content": "found"}
    generate(engine(server), Request.chat([*CALLED[:1], turn, result], tools=[SEARCH]))
    assert server.requests[1]["body"]["messages"][1] == {"role": "assistant", "content": blocks}


def test_a_tool_call_whose_arguments_are_no_object_is_a_request_fault(server):
    bad = [
        CALLED[0],
        {
            **CALLED[1],
            "tool_calls": [{**CALLED[1]["tool_calls"][0], "function": {"name": "search", "arguments": "[1"}}],
        },
    ]
    with pytest.raises(RequestError, match="toolu_0.*no JSON object"):
        generate(engine(server), Request.chat([*bad, CALLED[2]], tools=[SEARCH]))
    assert server.requests == []


# -- answers --------------------------------------------------------------------------------


def test_text_usage_and_finish_reason_are_read(server):
    response = generate(engine(server), chat())
    assert response.text == "echo: Capital of France?"
    assert (response.prompt_tokens, response.completion_tokens) == (15, 3)  # cache reads are prompt tokens
    assert response.finish_reason == "stop" and response.choice_tool_calls is None


@pytest.mark.parametrize(("reason", "finish"), [("max_tokens", "length"), ("refusal", "content_filter")])
def test_stop_reasons_map_onto_finish_reasons(server, reason, finish):
    server.then(reply(message([{"type": "text", "text": "x"}], reason)))
    assert generate(engine(server), chat()).finish_reason == finish


def test_the_stop_sequence_that_fired_is_kept_when_asked(server):
    server.then(reply(message([{"type": "text", "text": "Paris"}], "stop_sequence", stop_sequence="###")))
    server.then(reply(message([{"type": "text", "text": "Paris"}], "stop_sequence", stop_sequence="###")))
    assert generate(engine(server), chat(stop=["\n", "###"], keep_stop=True)).text == "Paris###"
    assert generate(engine(server), chat(stop=["\n", "###"])).text == "Paris"


# -- retries and failures -------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 529])
def test_overload_and_server_errors_are_retried(server, status):
    server.then(error(status, "busy"), error(status, "busy"))
    assert generate(engine(server), chat()).text == "echo: Capital of France?"
    assert len(server.requests) == 3


def test_retry_after_is_honoured(server):
    server.then(error(429, "slow down", **{"Retry-After": "0.3"}))
    generate(engine(server, backoff_max=5), chat())
    first, second = server.requests
    assert second["time"] - first["time"] >= 0.28


def test_retry_after_is_capped_at_backoff_max(server):
    server.then(error(429, "slow down", **{"Retry-After": "30"}))
    started = time.monotonic()
    generate(engine(server, backoff_max=0.05), chat())
    assert time.monotonic() - started < 5 and len(server.requests) == 2


def test_a_200_whose_body_is_no_message_is_retried(server):
    server.then(reply({"unexpected": True}))
    assert generate(engine(server), chat()).text == "echo: Capital of France?"
    assert len(server.requests) == 2


def test_exhausted_retries_end_in_one_line_naming_status_message_and_attempts(server):
    server.then(*[error(529, "Overloaded")] * 3)
    with pytest.raises(EngineError) as caught:
        generate(engine(server, max_retries=2), chat())
    text = str(caught.value)
    assert not isinstance(caught.value, RequestError)
    assert "\n" not in text and "HTTP 529" in text and "Overloaded" in text and "3 attempts" in text


def test_400_fails_at_once_as_a_request_fault(server):
    server.then(error(400, "prompt is too long"))
    with pytest.raises(RequestError, match="HTTP 400: prompt is too long.*1 attempt"):
        generate(engine(server), chat())
    assert len(server.requests) == 1


def test_a_404_says_the_base_url_must_end_before_v1(server):
    server.then(error(404, "not found"))
    with pytest.raises(EngineError, match="end before /v1"):
        generate(engine(server), chat())


def test_an_unreachable_base_url_fails_fast_in_one_line_naming_it():
    with pytest.raises(EngineError) as caught:
        generate(AnthropicEngine("m", base_url="http://127.0.0.1:9", max_retries=5, connect_retries=1, **FAST), chat())
    text = str(caught.value)
    assert "127.0.0.1:9" in text and "connection failed" in text and "2 attempts" in text


def test_api_key_never_appears_in_ids_errors_or_logs(server, monkeypatch, caplog):
    monkeypatch.setenv(KEY_ENV, SECRET)
    server.then(error(401, f"invalid x-api-key {SECRET}"))
    caplog.set_level(logging.DEBUG)
    made = engine(server, api_key_env=KEY_ENV)
    with pytest.raises(EngineError) as caught:
        generate(made, chat())
    for shown in (made.engine_id, repr(made), str(caught.value), caplog.text):
        assert SECRET not in shown


def test_concurrency_never_exceeds_the_cap_through_the_scheduler(server):
    server.delay = 0.05
    made = engine(server, concurrency=3)

    async def go() -> list[Any]:
        scheduler = Scheduler()
        try:
            return await asyncio.gather(*(scheduler.submit(made, chat(f"q{i}")) for i in range(10)))
        finally:
            await scheduler.close()
            await made.aclose()

    answers = asyncio.run(go())
    assert [a.text for a in answers] == [f"echo: q{i}" for i in range(10)]
    assert server.max_active <= 3


def test_registry_builds_the_engine_from_a_model_string(server):
    from ragbench._engines import load_engine

    made = load_engine("anthropic:claude-test", registry=installed_registry(), base_url=server.base_url)
    assert isinstance(made, AnthropicEngine) and made.engine_id.startswith("anthropic:claude-test@")


def test_preflight_wants_a_key_for_anthropics_own_api():
    [problem] = AnthropicEngine.preflight("claude-test", {})
    assert "ANTHROPIC_API_KEY" in problem


def test_without_the_sdk_the_engine_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "anthropic", None)  # import anthropic raises ImportError
    with pytest.raises(ConfigError, match=r"pip install 'ragbench\[anthropic\]'"):
        AnthropicEngine("claude-test")
