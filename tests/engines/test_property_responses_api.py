"""Property: the `openai` engine's two APIs carry the same request. For any conversation (a system prompt or none,
user texts, assistant turns with text, tool calls or both, tool results, any unicode; never two assistant turns
in a row, which the Responses form cannot tell from one) with any tools, tool choice
and output limit, the Responses API body (`api=responses`) and the chat completions body read back, by
tests/support/search_agent_fake.py's `canonical`, into the same conversation, tools, tool choice, limit and sampling;
and an assistant turn holding a Responses answer's output items is sent as exactly those items."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_property_vendor_messages import BAD_COUNTS, GOOD_COUNTS, answered, unreadable  # noqa: F401 (fixture)

from conftest import plugins_read_once
from ragbench.api.engines import Request, Response, Sampling
from ragbench.testing import load_engine
from support.search_agent_fake import canonical

TEXT = st.text(max_size=20)
NAME = st.sampled_from(["search", "get_document", "browse"])
CALL_IDS = st.text(alphabet="abc123_", min_size=1, max_size=6)

REGISTRY = plugins_read_once()  # one registry for every engine made here (each engine made anew)


@st.composite
def assistant_with_calls(draw: st.DrawFn) -> list[dict[str, Any]]:
    """An assistant turn calling tools, then each call's result."""
    ids = draw(st.lists(CALL_IDS, min_size=1, max_size=3, unique=True))
    calls = [{"id": i, "function": {"name": draw(NAME), "arguments": draw(TEXT)}} for i in ids]
    turn = {"role": "assistant", "content": draw(st.one_of(st.none(), TEXT.filter(bool))), "tool_calls": calls}
    return [turn, *({"role": "tool", "tool_call_id": i, "content": draw(TEXT)} for i in ids)]


TURNS = st.lists(
    st.one_of(
        TEXT.map(lambda text: [{"role": "user", "content": text}]),
        TEXT.filter(bool).map(lambda text: [{"role": "assistant", "content": text}]),
        assistant_with_calls(),
    ),
    min_size=1,
    max_size=5,
).map(lambda groups: [turn for group in groups for turn in group])
TOOLS = st.lists(NAME, unique=True, max_size=3).map(
    lambda names: [
        {"type": "function", "function": {"name": n, "description": n, "parameters": {"type": "object"}}} for n in names
    ]
)


def bodies(request: Request) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the chat completions body, the Responses body) the engine would send."""
    sent = []
    for api in ("chat_completions", "responses"):
        _, args = load_engine("openai:m", registry=REGISTRY, base_url="http://127.0.0.1:9/v1", api=api).call_arguments(
            request
        )
        sent.append({k: v for k, v in args.items() if k not in ("extra_body", "extra_headers")})
    return sent[0], sent[1]


@settings(max_examples=200, deadline=None)
@given(
    system=st.one_of(st.none(), TEXT),
    turns=TURNS,
    tools=TOOLS,
    choice=st.sampled_from([None, "auto", "required", "first"]),
    limit=st.integers(1, 10_000),
)
def test_both_apis_carry_the_same_conversation_tools_and_limits(system, turns, tools, choice, limit):
    # two assistant turns in a row are one in the Responses form (its items carry no turn boundary)
    assume(all(a["role"] != "assistant" or b["role"] != "assistant" for a, b in zip(turns, turns[1:])))
    tool_choice = None if not tools else (tools[0]["function"]["name"] if choice == "first" else choice)
    messages = ([{"role": "system", "content": system}] if system is not None else []) + [
        {"role": "user", "content": "Question: q"},
        *turns,
    ]
    request = Request.chat(messages, Sampling.make(max_tokens=limit), tools=tools, tool_choice=tool_choice)
    chat, responses = bodies(request)
    assert "messages" in chat and "input" in responses and "messages" not in responses
    assert canonical(json.loads(json.dumps(responses))) == canonical(json.loads(json.dumps(chat)))


@settings(max_examples=100, deadline=None)
@given(items=st.lists(st.dictionaries(st.sampled_from(["id", "summary", "status"]), TEXT), max_size=4))
def test_an_assistant_turn_holding_items_is_sent_as_exactly_those_items(items):
    items = [{"type": "reasoning", **item} for item in items]
    turn = {"role": "assistant", "content": "ignored", "items": items}
    request = Request.chat([{"role": "user", "content": "q"}, turn, {"role": "user", "content": "go on"}])
    _, responses = bodies(request)
    assert responses["input"] == [{"role": "user", "content": "q"}, *items, {"role": "user", "content": "go on"}]


# -- answers: a damaged usage or an item or part of no type is unreadable, never priced or scored --------------

CHAT_USAGE = ("prompt_tokens", "completion_tokens", "total_tokens")
RESPONSES_USAGE = ("input_tokens", "output_tokens", "total_tokens")
DETAILS = {
    "openai": (("prompt_tokens_details", "cached_tokens"), ("completion_tokens_details", "reasoning_tokens")),
    "responses": (("input_tokens_details", "cached_tokens"), ("output_tokens_details", "reasoning_tokens")),
}


def chat_answer(usage: dict[str, Any], message: dict[str, Any] | None = None) -> dict[str, Any]:
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": "ok"} if message is None else message,
        "finish_reason": "stop",
    }
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice], "usage": usage}


def responses_answer(usage: dict[str, Any], output: list[Any] | None = None) -> dict[str, Any]:
    part = {"type": "output_text", "text": "ok", "annotations": []}
    message = {"type": "message", "id": "m", "role": "assistant", "status": "completed", "content": [part]}
    body = {"id": "r", "object": "response", "created_at": 0, "model": "m", "status": "completed"}
    return body | {"output": [message] if output is None else output, "usage": usage}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kind=st.sampled_from(["openai", "responses"]),
    counts=st.lists(GOOD_COUNTS, min_size=5, max_size=5),
    field=st.integers(0, 4),
    bad=BAD_COUNTS,
)
def test_an_openai_usage_with_any_count_damaged_is_unreadable_and_never_priced(answered, kind, counts, field, bad):
    """Chat completions and the Responses API alike, the details' cached and reasoning tokens included."""
    names = CHAT_USAGE if kind == "openai" else RESPONSES_USAGE
    usage: dict[str, Any] = dict(zip(names, counts))
    usage |= {outer: {inner: count} for (outer, inner), count in zip(DETAILS[kind], counts[3:])}
    make = chat_answer if kind == "openai" else responses_answer
    good = answered(kind, make(usage))
    assert isinstance(good, Response) and (good.prompt_tokens, good.completion_tokens) == tuple(counts[:2])
    if field < 3:
        usage[names[field]], named = bad, names[field]
    else:
        (outer, inner) = DETAILS[kind][field - 3]
        usage[outer][inner], named = bad, f"{outer}.{inner}"
    assert unreadable(answered(kind, make(usage)), named)


UNTYPED_PARTS = st.sampled_from([{"text": "the answer", "annotations": []}, {"text": "x"}, {"type": None, "text": "x"}])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text(max_size=5), max_size=3), untyped=UNTYPED_PARTS, at=st.integers(0, 3), item=st.booleans())
def test_a_responses_output_item_or_part_lacking_a_type_is_never_scored(answered, texts, untyped, at, item):
    """`item`: the untyped one is an output item itself, else a part of a message's content."""
    parts: list[dict[str, Any]] = [{"type": "output_text", "text": text, "annotations": []} for text in texts]
    if not item:
        parts.insert(at, untyped)
    message = {"type": "message", "id": "m", "role": "assistant", "status": "completed", "content": parts}
    output = [message, untyped] if item else [message]
    assert unreadable(answered("responses", responses_answer({}, output)), "without a type")


def test_a_chat_choice_whose_message_holds_no_content_field_is_unreadable_not_the_empty_answer(answered):
    for message in ({}, {"role": "assistant"}):
        assert unreadable(answered("openai", chat_answer({}, message)), "no content")
    empty = answered("openai", chat_answer({}, {"role": "assistant", "content": None}))
    assert isinstance(empty, Response) and empty.text == ""  # content given as null: the empty answer
