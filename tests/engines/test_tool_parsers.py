"""The tool-call parsers of the engines that run the model (hf, and vllm without a parser of its own): any JSON
arguments a model writes in its family's format come back as written (the text as vLLM's parsers give it), the
content before the calls kept; a call whose JSON is cut short is kept as a malformed call, not read as text."""

from __future__ import annotations

import json
import sys

from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_engine_vllm import fake_vllm  # noqa: F401 (a fixture)
from test_engine_vllm_tools import tool_vllm  # noqa: F401 (a fixture)

from ragbench._engines.local.tool_parsers import (
    TOOL_PARSERS,
    TOOL_READING,
    hermes,
    llama3_json,
    template_messages,
    tool_sampling,
    with_tool_calls,
)
from ragbench._engines.vllm.tools import ToolCallReader
from ragbench.api.engines import Request, RequestError, Response
from ragbench.testing import load_engine

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
NAMES = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=10)
CONTENT = st.text(max_size=20).filter(lambda t: "<tool_call>" not in t)
SEARCH = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}


@settings(max_examples=80, deadline=None)
@given(calls=st.lists(st.tuples(NAMES, JSON_VALUES), min_size=1, max_size=3), content=CONTENT)
def test_hermes_reads_back_any_json_arguments(calls, content):
    text = content + "".join(
        f"<tool_call>\n{json.dumps({'name': n, 'arguments': a}, ensure_ascii=False)}\n</tool_call>\n" for n, a in calls
    )
    kept, parsed = hermes(text)
    assert kept == content
    assert [(c.name, c.arguments) for c in parsed] == calls
    assert [c.raw_arguments for c in parsed] == [json.dumps(a, ensure_ascii=False) for _, a in calls]
    assert len({c.id for c in parsed}) == len(calls) and hermes(text) == (kept, parsed)  # ids: unique, same each run


@settings(max_examples=80, deadline=None)
@given(
    calls=st.lists(st.tuples(NAMES, JSON_VALUES), min_size=1, max_size=3),
    tag=st.booleans(),
    key=st.sampled_from(["parameters", "arguments"]),
)
def test_llama3_json_reads_back_any_json_arguments(calls, tag, key):
    text = ("<|python_tag|>" if tag else "") + "; ".join(json.dumps({"name": n, key: a}) for n, a in calls)
    kept, parsed = llama3_json(text)
    assert kept == "" and [(c.name, c.arguments) for c in parsed] == calls


@settings(max_examples=80, deadline=None)
@given(
    calls=st.lists(st.tuples(NAMES, JSON_VALUES), min_size=1, max_size=3),
    cut=st.floats(0, 1, exclude_max=True),
    family=st.sampled_from(["hermes", "llama3_json"]),
)
@example(calls=[("search", 5)], cut=0.99, family="llama3_json")  # '{"name": "search", "arguments": 5': "5" is JSON
def test_a_call_cut_anywhere_after_its_name_is_kept_and_marked(calls, cut, family):
    """Cut short anywhere between its name and its last brace, the last call is still the function it names,
    its arguments marked as no JSON (even where the text left of them would read as JSON), the calls before
    it as written."""
    objects = [json.dumps({"name": n, "arguments": a}) for n, a in calls]
    last = objects[-1]
    named = len(json.dumps({"name": calls[-1][0]}))  # up to the end of the name's closing quote
    objects[-1] = last[: named + int(cut * (len(last) - named))]  # at most all but the last brace
    if family == "hermes":
        text = "".join(f"<tool_call>\n{o}\n</tool_call>" for o in objects[:-1]) + f"<tool_call>\n{objects[-1]}"
    else:
        text = "; ".join(objects)
    _, parsed = TOOL_PARSERS[family](text)
    assert [(c.name, c.arguments) for c in parsed[:-1]] == calls[:-1]
    assert parsed[-1].name == calls[-1][0] and parsed[-1].error


def test_text_without_calls_is_the_content():
    assert hermes("Paris is the capital.") == ("Paris is the capital.", ())
    assert llama3_json("Paris, {not a call}") == ("Paris, {not a call}", ())
    assert hermes("<tool_call>not json at all</tool_call>") == ("<tool_call>not json at all</tool_call>", ())


def test_a_call_cut_short_is_kept_malformed():
    kept, (call,) = hermes('Let me look.<tool_call>\n{"name": "search", "arguments": {"query": "Ann')
    assert kept == "Let me look." and call.name == "search" and call.raw_arguments == '{"query": "Ann'
    assert call.arguments is None and call.error
    _, (cut,) = llama3_json('{"name": "search", "parameters": {"query": ')
    assert cut.name == "search" and cut.arguments is None


def test_a_tool_request_reads_the_calls_and_one_without_a_parser_is_refused():
    request = Request.chat([{"role": "user", "content": "q"}], tools=[SEARCH])
    text = '<tool_call>\n{"name": "search", "arguments": {"query": "x"}}\n</tool_call>'
    answered = with_tool_calls(request, Response(texts=[text]), hermes, "hf")
    assert (
        answered.finish_reason == "tool_calls"
        and answered.text == ""
        and answered.tool_calls[0].arguments == {"query": "x"}
    )
    assert (
        with_tool_calls(Request.chat([{"role": "user", "content": "q"}]), Response(texts=[text]), hermes, "hf").text
        == text
    )
    assert isinstance(with_tool_calls(request, Response(texts=[text]), None, "hf"), RequestError)
    assert with_tool_calls(request, Response(texts=[" \n" + text]), hermes, "hf").text == ""  # as vLLM serves it


def test_templates_get_a_calls_arguments_as_an_object():
    call = {"id": "c", "type": "function", "function": {"name": "search", "arguments": '{"query": "x"}'}}
    bad = {"id": "d", "type": "function", "function": {"name": "search", "arguments": '{"query'}}
    out = template_messages([{"role": "assistant", "content": None, "tool_calls": [call, bad]}])
    assert [c["function"]["arguments"] for c in out[0]["tool_calls"]] == [{"query": "x"}, '{"query']


def test_ragbenchs_hermes_keeps_special_tokens_in_a_tool_requests_text_as_vllms_does(monkeypatch):
    for module in ("vllm.tool_parsers", "vllm.entrypoints.openai.tool_parsers"):  # a vLLM without a hermes parser
        monkeypatch.setitem(sys.modules, module, None)
    asked = [{"role": "user", "content": "q"}]
    request = Request.chat(asked, tools=[SEARCH])
    assert tool_sampling(request, "hermes").skip_special_tokens is False
    assert tool_sampling(request, "llama3_json") is request.sampling
    assert tool_sampling(Request.chat(asked, tools=[SEARCH], tool_choice="none"), "hermes").skip_special_tokens
    assert tool_sampling(Request.chat(asked), "hermes").skip_special_tokens
    assert ToolCallReader("hermes", object).sampling(request) == {"skip_special_tokens": False}  # the vllm engine's


def test_the_vllm_engines_id_says_how_its_tool_calls_are_read(tool_vllm):
    """Answers read another way (TOOL_READING raised) are not served from a cache made before."""
    engine = load_engine("vllm:m", tool_parser="hermes")
    assert f"tool_parser=hermes;tool_reading={TOOL_READING}" in engine.engine_id
