"""The `anthropic` engine: Anthropic's own SDK against a fake Messages API server on 127.0.0.1 (no network):
requests map onto the body, answers (text, tool use, stop reasons, usage) back into Responses, retries and
failures behave as the openai engine's, and the key stays out of everything shown."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_engine_openai import FAST, FakeServer, chat, generate
from test_engine_openai_tools import SEARCH
from test_search_agent import agent_run

from conftest import needs
from ragbench.api import ConfigError, EngineError
from ragbench.api.engines import Engine, Request, RequestError, Sampling
from ragbench.testing import load_engine

pytestmark = needs("anthropic")

KEY_ENV = "RAGBENCH_TEST_ANTHROPIC_KEY"
SECRET = "sk-ant-test-Zq9SECRETvalue0123456789"


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


def engine(server: FakeServer, **options: Any) -> Engine:
    return load_engine("anthropic:claude-test", base_url=server.base_url.removesuffix("/v1"), **{**FAST, **options})


def reply(body: Any, status: int = 200, **headers: str) -> dict[str, Any]:
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
        load_engine("anthropic:m", stop_sequences=["x"])
    with pytest.raises(ConfigError, match="secrets are not accepted") as caught:
        load_engine("anthropic:m", api_key="sk-ant-leak-123456")
    assert "leak" not in str(caught.value)


def test_n_logprobs_and_a_token_limit_left_to_the_server_are_request_faults():
    for sampling in ({"n": 2}, {"logprobs": 3}, {"left_to_server": ("max_tokens",)}):
        with pytest.raises(RequestError, match="Messages API takes no"):
            generate(load_engine("anthropic:m", base_url="http://127.0.0.1:9"), chat(**sampling))


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


def test_a_tool_call_whose_arguments_are_no_object_goes_back_with_input_an_empty_object(server):
    bad = [
        CALLED[0],
        {
            **CALLED[1],
            "tool_calls": [{**CALLED[1]["tool_calls"][0], "function": {"name": "search", "arguments": "[1"}}],
        },
    ]
    generate(engine(server), Request.chat([*bad, CALLED[2]], tools=[SEARCH]))
    assert server.requests[0]["body"]["messages"][1]["content"][1]["input"] == {}


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


def test_a_200_whose_body_is_no_message_is_retried(server):
    server.then(reply({"unexpected": True}))
    assert generate(engine(server), chat()).text == "echo: Capital of France?"
    assert len(server.requests) == 2


def test_a_404_says_the_base_url_must_end_before_v1(server):
    server.then(error(404, "not found"))
    with pytest.raises(EngineError, match="end before /v1"):
        generate(engine(server), chat())


def test_a_remote_mcp_server_goes_to_the_beta_endpoint_and_its_blocks_and_pause_come_back(server):
    blocks = [
        {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "search", "server_name": "s", "input": {"query": "x"}},
        {
            "type": "mcp_tool_result",
            "tool_use_id": "mcptoolu_1",
            "is_error": False,
            "content": [{"type": "text", "text": "[]"}],
        },
        {"type": "mcp_tool_use", "id": "mcptoolu_2", "name": "search", "server_name": "s", "input": {"query": "y"}},
    ]
    server.then(reply(message(blocks, "pause_turn")))
    mcp = {"type": "mcp", "server_label": "s", "server_url": "https://mcp.example/mcp"}
    sampling = Sampling.make(max_tokens=9, left_to_server=("temperature", "top_p"))
    response = generate(engine(server), Request.chat([{"role": "user", "content": "Q"}], sampling, tools=[mcp]))
    [got] = server.requests
    assert got["path"] == "/v1/messages?beta=true"
    assert {k.lower(): v for k, v in got["headers"].items()}["anthropic-beta"] == "mcp-client-2025-04-04"
    assert got["body"] == {
        "model": "claude-test",
        "max_tokens": 9,
        "messages": [{"role": "user", "content": "Q"}],
        "mcp_servers": [
            {"type": "url", "url": "https://mcp.example/mcp", "name": "s", "tool_configuration": {"enabled": True}}
        ],
    }
    assert response.finish_reason == "pause_turn" and not response.tool_calls
    assert json.loads(response.items or "null") == blocks


# -- a call whose input is no object: answered, and the conversation goes on ---------------------------------


@pytest.mark.parametrize("thinking", [False, True], ids=["plain", "with thinking (blocks sent back as kept)"])
def test_a_tool_use_whose_input_is_a_string_is_answered_with_the_error_and_the_agent_goes_on(tmp_path, thinking):
    """docs/agents.md: a call whose arguments do not fit is answered with the error and the model goes on; the
    next request sends the call back with an input the API takes (an object), not a request the API refuses."""

    def agent(path: str, body: dict[str, Any]) -> dict[str, Any]:
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and last[0]["type"] == "tool_result":
            return message([{"type": "text", "text": "Zealion"}])
        blocks = [{"type": "thinking", "thinking": "Search.", "signature": "sig"}] if thinking else []
        return message([*blocks, {"type": "tool_use", "id": "toolu_1", "name": "search", "input": "Rufea"}], "tool_use")

    fake = FakeServer(answer=agent)
    try:
        _, [line] = agent_run(tmp_path, "anthropic:m", model_args={"base_url": fake.base_url.removesuffix("/v1")})
    finally:
        fake.stop()
    assert (line["error"], line["prediction"]["answer"]) == (None, "Zealion")
    assert line["prediction"]["extras"]["invalid_tool_calls"] == 1
    first, second = (request["body"]["messages"] for request in fake.requests)
    assert [block for block in second[1]["content"] if block["type"] == "tool_use"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {}}
    ]
    [result] = second[2]["content"]
    assert result["tool_use_id"] == "toolu_1" and result["content"].startswith("Error executing search: arguments: ")


def test_kept_tool_use_blocks_whose_input_is_no_object_go_back_with_an_empty_object(server):
    blocks = [
        {"type": "mcp_tool_use", "id": "m1", "name": "search", "server_name": "s", "input": "x"},
        {"type": "mcp_tool_result", "tool_use_id": "m1", "is_error": True, "content": []},
        {"type": "tool_use", "id": "t1", "name": "search", "input": None},
        {"type": "tool_use", "id": "t2", "name": "search", "input": {"query": "y"}},
    ]
    turn = {"role": "assistant", "content": None, "items": blocks}
    generate(engine(server), Request.chat([{"role": "user", "content": "q"}, turn]))
    sent = server.requests[-1]["body"]["messages"][1]["content"]
    assert [block.get("input") for block in sent] == [{}, None, {}, {"query": "y"}]


def test_a_negative_cache_read_count_beside_the_input_is_retried_as_unreadable_never_priced(server):
    """The issue's case: `cache_read_input_tokens: -10` with `input_tokens: 10` summed to 0 prompt tokens."""
    damaged = message([{"type": "text", "text": "x"}])
    damaged["usage"] = {"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": -10}
    server.then(reply(damaged))
    response = generate(engine(server), chat())
    assert len(server.requests) == 2 and response.prompt_tokens == 15  # the retry's answer, priced right
    server.then(*[reply(damaged)] * 3)
    with pytest.raises(EngineError, match=r"unreadable response .*cache_read_input_tokens -10 .*\(3 attempts\)"):
        generate(engine(server, max_retries=2), chat())
