"""Tool calling in the LLM contract: a request's tools, tool choice and tool turns are part of its identity (cache
key, hash); a response's tool calls survive its dict form with the argument text as written, malformed arguments
kept and counted; the response checks refuse tool calls where none can be and calls that are not well formed."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api.engines import Message, Request, Response, Sampling, ToolCall, response_problem

SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the corpus.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
}
FETCH = {"type": "function", "function": {"name": "get_document", "parameters": {"type": "object"}}}
ASKED = [{"role": "user", "content": "Who wrote it?"}]
CALLED = ASKED + [
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"query": "author"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "[doc 3] ..."},
]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


def test_a_plain_chat_keeps_its_pairs_and_its_cache_key():
    request = Request.chat(ASKED)
    assert request.messages == (("user", "Who wrote it?"),)
    old_key = hashlib.sha256(repr(("e", None, request.messages, request.sampling)).encode()).hexdigest()
    assert request.cache_key("e") == old_key


def test_tools_tool_choice_and_tool_turns_are_in_the_cache_key():
    keys = {
        Request.chat(ASKED).cache_key("e"),
        Request.chat(ASKED, tools=[SEARCH]).cache_key("e"),
        Request.chat(ASKED, tools=[SEARCH, FETCH]).cache_key("e"),
        Request.chat(ASKED, tools=[SEARCH], tool_choice="required").cache_key("e"),
        Request.chat(ASKED, tools=[SEARCH], tool_choice="search").cache_key("e"),
        Request.chat(CALLED, tools=[SEARCH]).cache_key("e"),
    }
    assert len(keys) == 6
    assert Request.chat(CALLED, tools=[SEARCH]).cache_key("e") == Request.chat(CALLED, tools=[SEARCH]).cache_key("e")
    assert hash(Request.chat(CALLED, tools=[SEARCH])) == hash(Request.chat(CALLED, tools=[SEARCH]))


def test_tool_turns_go_out_in_the_openai_form():
    request = Request.chat(CALLED, tools=[SEARCH], tool_choice={"type": "function", "function": {"name": "search"}})
    assert isinstance(request.messages[1], Message) and request.messages[0] == ("user", "Who wrote it?")
    assert request.message_dicts() == CALLED
    assert request.tool_dicts() == [SEARCH] and json.dumps(request.tool_dicts()) == json.dumps([SEARCH])  # key order
    assert request.tool_choice_payload() == {"type": "function", "function": {"name": "search"}}
    assert request.to_dict()["tools"] == [SEARCH] and request.to_dict()["tool_choice"] == "search"


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "function"},
        {"type": "function", "function": {"name": ""}},
        {"description": "x"},
        {"name": "f", "parameters": []},
    ],
)
def test_a_tool_without_a_named_function_is_refused(bad):
    with pytest.raises(ValueError):
        Request.chat(ASKED, tools=[bad])


def test_a_tool_choice_must_name_an_offered_tool():
    with pytest.raises(ValueError, match="tool_choice"):
        Request.chat(ASKED, tools=[SEARCH], tool_choice="get_document")
    with pytest.raises(ValueError, match="without tools"):
        Request.chat(ASKED, tool_choice="auto")
    with pytest.raises(ValueError, match="chat"):
        Request(prompt="p", tools=Request.chat(ASKED, tools=[SEARCH]).tools)


@settings(max_examples=60, deadline=None)
@given(arguments=JSON_VALUES, spaced=st.booleans())
def test_any_json_arguments_survive_the_responses_dict_form(arguments, spaced):
    raw = json.dumps(arguments, indent=1 if spaced else None)
    response = Response(texts=[""], finish_reason="tool_calls", choice_tool_calls=[(ToolCall("c", "search", raw),)])
    back = Response.from_dict(json.loads(json.dumps(response.to_dict())))
    assert back.tool_calls[0].raw_arguments == raw and back.tool_calls[0].arguments == arguments
    assert back.malformed_tool_calls == 0 and back.tool_calls[0].error is None


def test_a_call_with_arguments_that_are_not_json_is_kept_and_counted():
    calls = [(ToolCall("a", "search", '{"query": "x"'), ToolCall("b", "search", '{"query": "y"}'))]
    response = Response.from_dict(Response(texts=[""], finish_reason="tool_calls", choice_tool_calls=calls).to_dict())
    assert [c.raw_arguments for c in response.tool_calls] == ['{"query": "x"', '{"query": "y"}']
    assert response.tool_calls[0].arguments is None and "not JSON" in response.tool_calls[0].error
    assert response.malformed_tool_calls == 1
    assert response_problem(response, Request.chat(ASKED, tools=[SEARCH])) is None


@pytest.mark.parametrize(
    "calls, finish, tools, problem",
    [
        ([(ToolCall("a", "search", "{}"),)], "tool_calls", [], "offered no tools"),
        (None, "tool_calls", [], "offered no tools"),
        ([(ToolCall("a", 7, "{}"),)], "tool_calls", [SEARCH], "not a string"),  # type: ignore[arg-type]
        ([(ToolCall("a", "search", None),)], "tool_calls", [SEARCH], "not a text"),  # type: ignore[arg-type]
        ([("a",)], "tool_calls", [SEARCH], "not a tool call"),
        ([(), ()], "stop", [SEARCH], "one tuple of calls per completion"),
        (None, "function_call", [SEARCH], "finish_reason"),
    ],
)
def test_a_malformed_tool_answer_is_the_engines_error(calls, finish, tools, problem):
    response = Response(texts=[""], finish_reason=finish, choice_tool_calls=calls)
    assert problem in (response_problem(response, Request.chat(ASKED, Sampling(), tools=tools)) or "")
