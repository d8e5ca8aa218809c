"""Property: whatever agent conversation a system sends (any texts, any number of tool calls per turn, their results
in any grouping), the `anthropic` and `gemini` engines map it onto their API without losing or reordering
anything: every text, every call (id, name, arguments as an object) and every result (answering its call's id,
under the called function's name for Gemini) appears once, in order; consecutive results share one user turn, so
no two user turns of results follow each other; and a tool turn comes only right after the assistant turn that
called it."""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_engine_openai import FAST, FakeServer

from conftest import needs
from ragbench._engines.hosted.anthropic_messages import message_arguments
from ragbench._engines.hosted.gemini_contents import content_arguments
from ragbench.api import EngineError
from ragbench.api.engines import Request, Response

TEXT = st.text(min_size=1, max_size=20)
NAMES = st.sampled_from(["search", "get_document", "näme"])
ARGUMENTS = st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=5)), max_size=3)


@st.composite
def conversations(draw: Any) -> list[dict[str, Any]]:
    """A user question, then rounds of an assistant turn (text and/or calls) and the results of its calls."""
    turns: list[dict[str, Any]] = [{"role": "user", "content": draw(TEXT)}]
    for round_number in range(draw(st.integers(0, 4))):
        calls = [
            {
                "id": f"call_{round_number}_{n}",
                "type": "function",
                "function": {"name": draw(NAMES), "arguments": json.dumps(draw(ARGUMENTS))},
            }
            for n in range(draw(st.integers(0, 3)))
        ]
        content = draw(st.one_of(st.none(), TEXT)) if calls else draw(TEXT)
        turns.append({"role": "assistant", "content": content, "tool_calls": calls})
        turns += [{"role": "tool", "tool_call_id": call["id"], "content": draw(TEXT)} for call in calls]
        if not calls:
            turns.append({"role": "user", "content": draw(TEXT)})
    return turns


def expected(turns: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """The conversation's texts, calls and results in order, as (kind, ...) tuples."""
    out: list[tuple[str, ...]] = []
    names = {call["id"]: call["function"]["name"] for turn in turns for call in turn.get("tool_calls") or ()}
    for turn in turns:
        if turn["role"] == "tool":
            out.append(("result", turn["tool_call_id"], names[turn["tool_call_id"]], turn["content"]))
            continue
        if turn["content"]:
            out.append(("text", turn["role"], turn["content"]))
        for call in turn.get("tool_calls") or ():
            arguments = json.dumps(json.loads(call["function"]["arguments"]), sort_keys=True)
            out.append(("call", call["id"], call["function"]["name"], arguments))
    return out


def anthropic_seen(messages: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    names: dict[str, str] = {}
    for message in messages:
        blocks = message["content"]
        if isinstance(blocks, str):
            out.append(("text", message["role"], blocks))
            continue
        for block in blocks:
            if block["type"] == "text":
                out.append(("text", message["role"], block["text"]))
            elif block["type"] == "tool_use":
                names[block["id"]] = block["name"]
                out.append(("call", block["id"], block["name"], json.dumps(block["input"], sort_keys=True)))
            else:
                out.append(("result", block["tool_use_id"], names[block["tool_use_id"]], block["content"]))
    return out


def gemini_seen(contents: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for content in contents:
        role = "assistant" if content["role"] == "model" else "user"
        for part in content["parts"]:
            if "text" in part:
                out.append(("text", role, part["text"]))
            elif "function_call" in part:
                call = part["function_call"]
                out.append(("call", call["id"], call["name"], json.dumps(call["args"], sort_keys=True)))
            else:
                answer = part["function_response"]
                out.append(("result", answer["id"], answer["name"], answer["response"]["result"]))
    return out


@settings(max_examples=150, deadline=None)
@given(conversations())
def test_anthropic_messages_keep_every_text_call_and_result_in_order(turns):
    messages = message_arguments(Request.chat(turns), "claude-test")["messages"]
    assert anthropic_seen(messages) == expected(turns)
    for before, after in zip(messages, messages[1:]):
        results = isinstance(after["content"], list) and after["content"][0].get("type") == "tool_result"
        if results:  # right after the assistant turn that called them, all of them in one user turn
            assert before["role"] == "assistant"
            called = {block["id"] for block in before["content"] if block["type"] == "tool_use"}
            assert {block["tool_use_id"] for block in after["content"]} == called


@settings(max_examples=150, deadline=None)
@given(conversations())
def test_gemini_contents_keep_every_text_call_and_result_in_order(turns):
    contents, _ = content_arguments(Request.chat(turns))
    assert gemini_seen(contents) == expected(turns)
    for before, after in zip(contents, contents[1:]):
        if "function_response" in after["parts"][0]:
            assert before["role"] == "model"
            called = {part["function_call"]["id"] for part in before["parts"] if "function_call" in part}
            assert {part["function_response"]["id"] for part in after["parts"]} == called


# -- answers: a damaged usage or a block of no known shape is unreadable, never priced or scored ---------------

# a token count no server may send: negative, past 10^9, a bool, a float (whole or not), a text, a container
BAD_COUNTS = st.one_of(
    st.integers(max_value=-1),
    st.integers(min_value=10**9 + 1),
    st.booleans(),
    st.floats(allow_nan=False),
    st.text(max_size=3),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(0, 3), max_size=1),
)
GOOD_COUNTS = st.integers(0, 10**6)
ANTHROPIC_USAGE = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
GEMINI_USAGE = (
    "promptTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "cachedContentTokenCount",
    "toolUsePromptTokenCount",
    "totalTokenCount",
)


class Answering:
    """A real local server and the engine (max_retries 0) of each vendor on it, asked from one event loop (an
    engine's client is made once per loop: a fresh loop per example would spend most of the test making them)."""

    def __init__(self) -> None:
        self.server = FakeServer()
        self.loop = asyncio.new_event_loop()
        self.engines: dict[str, Any] = {}

    def __call__(self, kind: str, body: Any) -> Response | Exception:
        """What the `kind` engine makes of one reply of `body`."""
        if kind not in self.engines:
            module, engine, options = ENGINES[kind]
            url = self.server.base_url if module == "openai" else self.server.base_url.removesuffix("/v1")
            made = getattr(importlib.import_module(f"ragbench._engines.hosted.{module}"), engine)
            self.engines[kind] = made("m", base_url=url, max_retries=0, **FAST, **options)
        self.server.script[:] = [{"status": 200, "headers": {}, "body": body}]
        try:
            return self.loop.run_until_complete(self.engines[kind].agenerate_one(Request.chat(QUESTION)))
        except EngineError as exc:
            return exc

    def close(self) -> None:
        for engine in self.engines.values():
            self.loop.run_until_complete(engine.aclose())
        self.loop.close()
        self.server.stop()


QUESTION = [{"role": "user", "content": "q"}]
# kind: (module of ragbench._engines, engine class, options)
ENGINES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "anthropic": ("anthropic", "AnthropicEngine", {}),
    "gemini": ("gemini", "GeminiEngine", {}),
    "openai": ("openai", "OpenAIEngine", {}),
    "responses": ("openai", "OpenAIEngine", {"api": "responses"}),
}


@pytest.fixture(scope="module")
def answered() -> Iterator[Answering]:
    answering = Answering()
    yield answering
    answering.close()


def anthropic_answer(content: list[Any], usage: dict[str, Any]) -> dict[str, Any]:
    return {"id": "msg", "type": "message", "role": "assistant", "model": "m", "content": content} | {
        "stop_reason": "end_turn",
        "usage": usage,
    }


def gemini_answer(parts: list[Any], usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
        "usageMetadata": usage,
    }


def unreadable(outcome: Response | Exception, named: str) -> bool:
    return isinstance(outcome, EngineError) and "unreadable response" in str(outcome) and named in str(outcome)


@needs("anthropic")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    usage=st.fixed_dictionaries({name: GOOD_COUNTS for name in ANTHROPIC_USAGE}),
    field=st.sampled_from(ANTHROPIC_USAGE),
    bad=BAD_COUNTS,
)
def test_an_anthropic_usage_with_any_count_damaged_is_unreadable_and_never_priced(answered, usage, field, bad):
    good = answered("anthropic", anthropic_answer([{"type": "text", "text": "ok"}], usage))
    assert (
        isinstance(good, Response)
        and good.prompt_tokens
        == usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
    )
    outcome = answered("anthropic", anthropic_answer([{"type": "text", "text": "ok"}], usage | {field: bad}))
    assert unreadable(outcome, field)


@needs("google.genai")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    usage=st.fixed_dictionaries({name: GOOD_COUNTS for name in GEMINI_USAGE}),
    field=st.sampled_from(GEMINI_USAGE),
    bad=BAD_COUNTS,
)
def test_a_gemini_usage_with_any_count_damaged_is_unreadable_and_never_priced(answered, usage, field, bad):
    good = answered("gemini", gemini_answer([{"text": "ok"}], usage))
    assert (
        isinstance(good, Response)
        and good.completion_tokens == usage["candidatesTokenCount"] + usage["thoughtsTokenCount"]
    )
    outcome = answered("gemini", gemini_answer([{"text": "ok"}], usage | {field: bad}))
    assert unreadable(outcome, "usage")


TYPED_BLOCKS = st.sampled_from(
    [
        {"type": "text", "text": "ok"},
        {"type": "thinking", "thinking": "hm", "signature": "s"},
        {"type": "redacted_thinking", "data": "x"},
    ]
)
UNTYPED = st.sampled_from([{"text": "the answer"}, {"thinking": "hm"}, {}, {"type": None, "text": "x"}, {"type": 3}])


@needs("anthropic")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blocks=st.lists(TYPED_BLOCKS, max_size=3), untyped=UNTYPED, at=st.integers(0, 3))
def test_an_anthropic_content_list_with_a_block_lacking_a_type_is_never_scored(answered, blocks, untyped, at):
    content = [*blocks[:at], untyped, *blocks[at:]]
    outcome = answered("anthropic", anthropic_answer(content, {"input_tokens": 1, "output_tokens": 1}))
    assert unreadable(outcome, "without a type")


@needs("google.genai")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.lists(st.sampled_from([{"text": "ok"}, {"text": "hm", "thought": True}]), max_size=3),
    empty=st.sampled_from([{}, {"txt": "the answer"}, {"text": None}, {"kind": "text", "value": "x"}]),
    at=st.integers(0, 3),
)
def test_a_gemini_part_of_no_known_field_is_never_scored(answered, parts, empty, at):
    outcome = answered("gemini", gemini_answer([*parts[:at], empty, *parts[at:]], {"promptTokenCount": 1}))
    assert unreadable(outcome, "no field")
