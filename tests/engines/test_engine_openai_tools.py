"""The `openai` engine's tool calling against a fake OpenAI-compatible server on 127.0.0.1: tools and tool choice
go out in the chat body, tool turns go back in the OpenAI form, the server's tool calls come back with their
argument text as sent (arguments that are not JSON kept and counted) (a malformed call is that call's EngineError,
counted by the scheduler, not a crash: tests/run/test_scheduler_faults.py)."""

from __future__ import annotations

from typing import Any

import pytest
from test_engine_openai import FAST, FakeServer, generate

from ragbench.api.engines import Engine, Request
from ragbench.testing import load_engine

SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
}
ASKED = [{"role": "user", "content": "Who wrote it?"}]
CALLED = ASKED + [
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_0", "type": "function", "function": {"name": "search", "arguments": '{"query":"author"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_0", "content": "[1] Ann"},
]


def tool_reply(calls: Any) -> dict[str, Any]:
    """A chat completion whose one choice calls `calls` (the message's tool_calls as a server sends them)."""
    return {
        "status": 200,
        "body": {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1700000000,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "logprobs": None,
                    "message": {"role": "assistant", "content": None, "tool_calls": calls},
                }
            ],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
        },
    }


def call(id: str, arguments: str, name: Any = "search") -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.fixture
def server():
    fake = FakeServer()
    yield fake
    fake.stop()


def engine(server: FakeServer) -> Engine:
    return load_engine("openai:m", base_url=server.base_url, max_retries=0, **FAST)


def test_tools_tool_choice_and_tool_turns_go_out_in_the_chat_body(server):
    server.then(tool_reply([call("call_1", '{"query": "x"}')]))
    generate(engine(server), Request.chat(CALLED, tools=[SEARCH], tool_choice="search"))
    body = server.requests[0]["body"]
    assert server.requests[0]["path"].endswith("/chat/completions")
    assert body["tools"] == [SEARCH] and body["tool_choice"] == {"type": "function", "function": {"name": "search"}}
    assert body["messages"] == CALLED


def test_a_request_without_tools_sends_no_tool_fields(server):
    generate(engine(server), Request.chat(ASKED))
    assert "tools" not in server.requests[0]["body"] and "tool_choice" not in server.requests[0]["body"]


def test_the_servers_tool_calls_come_back_with_their_text_and_malformed_arguments_kept(server):
    server.then(tool_reply([call("call_1", '{"query": "Ann\\u00e9"}'), call("call_2", '{"query": ')]))
    response = generate(engine(server), Request.chat(ASKED, tools=[SEARCH], tool_choice="auto"))
    assert response.finish_reason == "tool_calls" and response.text == ""
    assert [(c.id, c.name, c.raw_arguments) for c in response.tool_calls] == [
        ("call_1", "search", '{"query": "Ann\\u00e9"}'),
        ("call_2", "search", '{"query": '),
    ]
    assert response.tool_calls[0].arguments == {"query": "Anné"}
    assert response.tool_calls[1].arguments is None and response.malformed_tool_calls == 1
