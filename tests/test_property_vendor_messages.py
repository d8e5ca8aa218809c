"""Property: whatever agent conversation a system sends (any texts, any number of tool calls per turn, their results
in any grouping), the `anthropic` and `gemini` engines map it onto their API without losing or reordering
anything: every text, every call (id, name, arguments as an object) and every result (answering its call's id,
under the called function's name for Gemini) appears once, in order; consecutive results share one user turn, so
no two user turns of results follow each other; and a tool turn comes only right after the assistant turn that
called it."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._engines.anthropic_messages import message_arguments
from ragbench._engines.gemini_contents import content_arguments
from ragbench._values.llm_calls import Request

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
