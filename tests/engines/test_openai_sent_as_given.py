"""The `openai` engine hands the SDK the conversation and the tools as they are to be sent (`sent_as_given`):
the SDK's per-request walk over its parameter types (`maybe_transform`) does not see them, and the body on the
wire is the one create() would send with them as typed arguments, key for key and in the same order."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
from hypothesis import given, settings
from hypothesis import strategies as st
from openai._utils import _transform
from openai.resources.chat.completions import completions
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from test_engine_openai import FAST, server  # noqa: F401 (the fake server, a fixture)
from test_engine_openai_tools import CALLED, SEARCH

from ragbench._engines.hosted.openai import SENT_AS_GIVEN, OpenAIEngine
from ragbench.api.engines import Request, Sampling

TEXT = st.text(max_size=20)
NAME = st.from_regex(r"[a-z_]{1,8}", fullmatch=True)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT, lambda inner: st.lists(inner) | st.dictionaries(TEXT, inner)
)


@st.composite
def conversations(draw: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(messages, tools) in the OpenAI chat form: system, user, assistant turns with tool calls, tool results."""
    names = draw(st.lists(NAME, min_size=1, max_size=3, unique=True))
    tools = [
        {
            "type": "function",
            "function": {
                "name": n,
                "description": draw(TEXT),
                "parameters": draw(st.dictionaries(TEXT, JSON, max_size=3)),
            },
        }
        for n in names
    ]
    messages: list[dict[str, Any]] = [{"role": "system", "content": draw(TEXT)}]
    for turn in range(draw(st.integers(1, 4))):
        messages.append({"role": "user", "content": draw(TEXT)})
        calls = [
            {"id": f"c{turn}_{i}", "type": "function", "function": {"name": name, "arguments": draw(TEXT)}}
            for i, name in enumerate(draw(st.lists(st.sampled_from(names), max_size=2)))
        ]
        messages.append({"role": "assistant", "content": draw(st.none() | TEXT), "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": draw(TEXT)} for c in calls]
    return messages, tools


def request_of(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Request:
    return Request.chat(messages, Sampling.make(max_tokens=16), tools=tools, tool_choice="auto")


@settings(max_examples=60, deadline=None)
@given(conversation=conversations(), api=st.sampled_from(["chat_completions", "responses"]))
def test_the_sdks_transform_changes_nothing_in_what_is_sent_as_given(conversation, api):
    """The premise: for these fields the SDK's walk is the identity (no aliases or formats in their types)."""
    _, args = OpenAIEngine("m", base_url="http://127.0.0.1:9/v1", api=api).call_arguments(request_of(*conversation))
    given_fields = {key: args[key] for key in SENT_AS_GIVEN if key in args}
    params = ResponseCreateParamsNonStreaming if api == "responses" else CompletionCreateParamsNonStreaming
    assert _transform.maybe_transform(given_fields, params) == given_fields


def test_the_body_sent_is_the_sdks_and_its_transform_never_sees_the_conversation(server, monkeypatch):
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}, *CALLED]
    tools = [SEARCH]
    engine = OpenAIEngine("m", base_url=server.base_url, **FAST)
    request = request_of(messages, tools)
    _, typed = engine.call_arguments(request)
    transformed: list[dict[str, Any]] = []
    walk = completions.async_maybe_transform

    async def recording(data: Any, expected: Any) -> Any:
        transformed.append(data)
        return await walk(data, expected)

    monkeypatch.setattr(completions, "async_maybe_transform", recording)

    async def both() -> None:
        try:
            await engine.agenerate_one(request)  # sent as given
            client = openai.AsyncOpenAI(base_url=server.base_url, api_key="EMPTY", max_retries=0)
            async with client:
                await client.chat.completions.create(**typed)  # the same arguments, all typed
        finally:
            await engine.aclose()

    asyncio.run(both())
    ours, sdks = (request["body"] for request in server.requests)
    assert list(ours.items()) == list(sdks.items())
    assert transformed[0]["messages"] == [] and transformed[0]["tools"] == []
    assert transformed[1]["messages"] == messages
