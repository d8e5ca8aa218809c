"""Property: the `openai` engine's two APIs carry the same request. For any conversation (a system prompt or none,
user texts, assistant turns with text, tool calls or both, tool results, any unicode; never two assistant turns
in a row, which the Responses form cannot tell from one) with any tools, tool choice
and output limit, the Responses API body (`api=responses`) and the chat completions body read back, by
tests/search_agent_fake.py's `canonical`, into the same conversation, tools, tool choice, limit and sampling;
and an assistant turn holding a Responses answer's output items is sent as exactly those items."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ragbench._engines.openai import OpenAIEngine
from ragbench._values.llm_calls import Request, Sampling
from search_agent_fake import canonical

TEXT = st.text(max_size=20)
NAME = st.sampled_from(["search", "get_document", "browse"])
CALL_IDS = st.text(alphabet="abc123_", min_size=1, max_size=6)


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
        _, args = OpenAIEngine("m", base_url="http://127.0.0.1:9/v1", api=api)._arguments(request)
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
