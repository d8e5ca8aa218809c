"""The `openai` engine over OpenAI's Responses API (`api=responses`) against the scriptable server of
tests/engines/test_engine_openai.py: what a request becomes (instructions, input items, flat tools, tool choice,
max_output_tokens, sampling but what is left to the server, over chat completions too), what an answer gives (text, tool calls, usage, finish reason, the output items kept and sent
back as they are, reasoning included), what it refuses, and that the choice keys the cache."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_engine_openai import FAST, FakeServer, generate, no_ambient_openai_env  # noqa: F401 (autouse)

from ragbench.api import EngineError
from ragbench.api.engines import Engine, Request, RequestError, Response, Sampling, response_problem
from ragbench.testing import load_engine

SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        "strict": True,
    },
}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "look it up"}]}
CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "search",
    "arguments": '{"query": "Paris"}',
    "status": "completed",
}
MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Let me search.", "annotations": []}],
}


def replied(*output: dict[str, Any], status: str = "completed", **extra: Any) -> dict[str, Any]:
    """The server's scripted reply: a Responses answer with these output items."""
    usage = {"input_tokens": 30, "output_tokens": 7, "total_tokens": 37}
    body = {"id": "resp_1", "object": "response", "created_at": 0, "model": "m", "status": status}
    return {"status": 200, "body": body | {"output": list(output), "usage": usage, **extra}}


@pytest.fixture
def server():
    fake = FakeServer()
    yield fake
    fake.stop()


def engine(server: FakeServer, **options: Any) -> Engine:
    return load_engine("openai:m", base_url=server.base_url, api="responses", **FAST, **options)


def conversation(**sampling: Any) -> Request:
    return Request.chat(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Capital of France?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_0", "function": {"name": "search", "arguments": '{"query": "France"}'}}],
            },
            {"role": "tool", "tool_call_id": "call_0", "content": "[]"},
        ],
        Sampling.make(max_tokens=50, temperature=0.0, **sampling),
        tools=[SEARCH],
        tool_choice="auto",
    )


def test_a_chat_request_becomes_instructions_input_items_flat_tools_and_max_output_tokens(server):
    server.then(replied(MESSAGE))
    generate(engine(server), conversation())
    sent = server.requests[0]
    assert sent["path"] == "/v1/responses"
    body = sent["body"]
    assert body["instructions"] == "Be brief."
    assert body["input"] == [
        {"role": "user", "content": "Capital of France?"},
        {"type": "function_call", "call_id": "call_0", "name": "search", "arguments": '{"query": "France"}'},
        {"type": "function_call_output", "call_id": "call_0", "output": "[]"},
    ]
    assert body["tools"] == [{"type": "function", **SEARCH["function"]}]
    assert (body["tool_choice"], body["max_output_tokens"], body["temperature"]) == ("auto", 50, 0.0)
    assert "messages" not in body and "max_tokens" not in body


def test_an_answer_gives_its_text_tool_calls_usage_and_items_reasoning_included(server):
    server.then(replied(REASONING, MESSAGE, CALL))
    response = generate(engine(server), conversation())
    assert response.text == "Let me search."
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [("call_1", "search", {"query": "Paris"})]
    assert (response.prompt_tokens, response.completion_tokens, response.finish_reason) == (30, 7, "tool_calls")
    assert json.loads(response.items or "") == [REASONING, MESSAGE, CALL]  # as sent, status included
    assert response_problem(response, conversation()) is None
    assert Response.from_dict(response.to_dict()) == response  # the cache and replay keep them


def test_an_assistant_turn_holding_items_is_sent_back_as_those_items(server):
    items = [REASONING, {k: v for k, v in CALL.items() if k != "status"}]
    turns = conversation().message_dicts()[:2] + [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "function": CALL}], "items": items},
        {"role": "tool", "tool_call_id": "call_1", "content": "[]"},
    ]
    server.then(replied(MESSAGE))
    generate(engine(server), Request.chat(turns, tools=[SEARCH]))
    assert server.requests[0]["body"]["input"][1:] == [
        *items,
        {"type": "function_call_output", "call_id": "call_1", "output": "[]"},
    ]
    chat = load_engine("openai:m", base_url=server.base_url, **FAST)  # chat completions: the items are not sent
    server.then({"status": 200, "body": {"choices": [{"index": 0, "message": {"content": "ok"}}]}})
    generate(chat, Request.chat(turns, tools=[SEARCH]))
    assert all("items" not in message for message in server.requests[1]["body"]["messages"])


@pytest.mark.parametrize(("reason", "finish"), [("max_output_tokens", "length"), ("content_filter", "content_filter")])
def test_an_incomplete_answer_says_why_as_a_finish_reason(server, reason, finish):
    server.then(replied(MESSAGE, status="incomplete", incomplete_details={"reason": reason}))
    assert generate(engine(server), conversation()).finish_reason == finish


def test_a_failed_answer_is_retried_then_the_engines_error(server):
    server.then(*[replied(MESSAGE, status="failed")] * 3)
    with pytest.raises(EngineError, match="unreadable response"):
        generate(engine(server, max_retries=2), conversation())
    assert [sent["path"] for sent in server.requests] == ["/v1/responses"] * 3


@pytest.mark.parametrize(
    "sampling", [{"n": 2, "temperature": 0.7}, {"stop": ["\n"]}, {"logprobs": 2}, {"logprob_tokens": ["[Relevant]"]}]
)
def test_what_the_responses_api_cannot_take_is_the_requests_fault(server, sampling):
    with pytest.raises(RequestError, match="the Responses API takes no"):
        generate(engine(server), Request.chat([{"role": "user", "content": "hi"}], Sampling.make(**sampling)))
    assert server.requests == []


def test_the_api_keys_the_cache(server):
    chat = load_engine("openai:m", base_url=server.base_url)
    assert engine(server).engine_id == chat.engine_id + ";api=responses"
    request = conversation()
    assert request.cache_key(engine(server).engine_id) != request.cache_key(chat.engine_id)


@pytest.mark.parametrize("items", ["not json", "{}", "[1]", '[{"id": "x"}]'])
def test_output_items_that_are_no_list_of_typed_objects_are_refused(items):
    response = Response(texts=["ok"], choice_tool_calls=[()], items=items)
    assert "output items" in (response_problem(response, conversation()) or "")


@pytest.mark.parametrize("api", ["chat_completions", "responses"])
@pytest.mark.parametrize("left", [("temperature",), ("top_p",), ("temperature", "top_p")])
def test_sampling_left_to_the_server_is_not_sent(server, api, left):
    if api == "responses":
        server.then(replied(MESSAGE))  # chat completions: the server's own answer
    generate(
        load_engine("openai:m", base_url=server.base_url, api=api, **FAST), conversation(top_p=0.5, left_to_server=left)
    )
    body = server.requests[0]["body"]
    assert {name: body[name] for name in ("temperature", "top_p") if name in body} == {
        name: value for name, value in {"temperature": 0.0, "top_p": 0.5}.items() if name not in left
    }


def test_leaving_sampling_to_the_server_keys_the_cache_and_leaves_other_keys_as_they_were():
    sampling = Sampling.make(max_tokens=50)
    left = Sampling.make(max_tokens=50, left_to_server=["temperature"])
    assert repr(left) == repr(sampling)  # the keys of requests that leave nothing to the server are unchanged
    request = Request(prompt="hi", sampling=sampling)
    assert request.cache_key("e") != Request(prompt="hi", sampling=left).cache_key("e")
    assert "left_to_server" not in request.to_dict()["sampling"]
    with pytest.raises(TypeError, match="left_to_server: stop"):
        Sampling.make(left_to_server=["stop"])
    with pytest.raises(TypeError, match="n is the server's default, 1, not n=2"):
        Sampling.make(n=2, left_to_server=["n"])
    named = Sampling.make(max_tokens=50, max_tokens_as="max_completion_tokens")
    assert repr(named) == repr(sampling) and "max_tokens_as" not in request.to_dict()["sampling"]
    assert Request(prompt="hi", sampling=named).cache_key("e") != request.cache_key("e")
    with pytest.raises(TypeError, match="max_tokens_as: 'max_output_tokens'"):
        Sampling.make(max_tokens_as="max_output_tokens")


def test_an_output_text_part_without_its_type_is_retried_as_unreadable_not_scored_empty(server):
    untyped = {**MESSAGE, "content": [{"text": "Paris", "annotations": []}]}
    server.then(replied(untyped), replied(MESSAGE))
    assert generate(engine(server), conversation()).text == "Let me search."
    server.then(*[replied(untyped)] * 3)
    with pytest.raises(EngineError, match="unreadable response .*without a type"):
        generate(engine(server, max_retries=2), conversation())
