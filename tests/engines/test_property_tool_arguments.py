"""Property: a tool call's arguments of any JSON shape and depth are checked against the tool's parameter schema
without raising, and fit exactly when the schema says so; arguments nested deeper than Python's json reads are
read as no JSON wherever a call's text is read (`ToolCall`, the hermes and llama3_json parsers, qwen_client),
never a crash."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._cost.budget import BudgetTally
from ragbench._engines.local.tool_parsers import hermes, llama3_json
from ragbench._values.tool_calls import Tool, ToolCall
from ragbench.api.engines import arguments_problem
from ragbench.plugins.search_agent import qwen_client
from ragbench.plugins.search_agent.tools import OPENAI_CLIENT, OSS_CLIENT, parameters

KEYS = st.sampled_from(["query", "docid", "user_query", "k"]) | st.text(max_size=4)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=3),
    max_leaves=12,
)
ARGUMENTS = st.dictionaries(KEYS, JSON, max_size=3) | JSON

# each tool a search agent offers: (its parameters, its one argument, whether other keys are refused)
TOOL_SCHEMAS = [
    (parameters(OPENAI_CLIENT.query, OPENAI_CLIENT.query_description), "query", True),
    (parameters(OSS_CLIENT.query, OSS_CLIENT.query_description), "user_query", True),
    (parameters("docid", "Document ID to retrieve"), "docid", True),
    (qwen_client.mcp_function("search", "d", "query")["parameters"], "query", False),
    (qwen_client.mcp_function("get_document", "d", "docid")["parameters"], "docid", False),
]


@settings(max_examples=150, deadline=None)
@given(ARGUMENTS, st.sampled_from(TOOL_SCHEMAS))
def test_arguments_fit_a_tools_parameters_exactly_when_they_hold_its_one_string_argument(arguments, tool):
    schema, argument, strict = tool
    fits = (
        isinstance(arguments, dict)
        and isinstance(arguments.get(argument), str)
        and (not strict or set(arguments) == {argument})
    )
    problem = arguments_problem(schema, arguments)
    assert (problem is None) == fits
    assert problem is None or problem.startswith("arguments")


TYPES = st.sampled_from(["object", "array", "string", "integer", "number", "boolean", "null"])
KIND = TYPES | st.lists(TYPES, min_size=1, max_size=3, unique=True)
SCALAR_CHECKS = {"type": KIND, "enum": st.lists(SCALARS, min_size=1, max_size=3), "const": SCALARS}
SCHEMAS = st.recursive(
    st.fixed_dictionaries({}, optional=SCALAR_CHECKS) | st.booleans(),
    lambda children: st.fixed_dictionaries(
        {},
        optional={
            "type": KIND,
            "properties": st.dictionaries(KEYS, children, max_size=3),
            "required": st.lists(KEYS, max_size=2, unique=True),
            "additionalProperties": children,
            "items": children,
        },
    ),
    max_leaves=6,
)


@settings(max_examples=200, deadline=None)
@given(SCHEMAS, ARGUMENTS)
def test_arguments_fit_a_schema_of_the_subset_exactly_when_jsonschema_says_they_do(schema, arguments):
    jsonschema = pytest.importorskip("jsonschema")  # the reference, where it is installed (not a dependency)
    expected = jsonschema.Draft202012Validator(schema).is_valid(arguments)
    assert (arguments_problem(schema, arguments) is None) == expected


def nested(depth: int, inner: str = '"x"') -> str:
    return "[" * depth + inner + "]" * depth


DEPTHS = st.integers(min_value=0, max_value=5000)


@settings(max_examples=60, deadline=None)
@given(DEPTHS, st.sampled_from(TOOL_SCHEMAS))
def test_arguments_of_any_depth_are_checked_or_read_as_no_json_never_a_crash(depth, tool):
    schema, argument, _ = tool
    call = ToolCall("c", "search", f'{{"{argument}": {nested(depth)}}}')
    readable = call.error is None
    assert readable == (call.arguments is not None)
    if readable:
        assert (arguments_problem(schema, call.arguments) is None) == (depth == 0)
    else:
        assert call.error is not None and call.error.startswith(
            ("arguments are not JSON", "arguments are nested more than")
        )
    offered = (Tool.of({"name": "search", "parameters": schema}),)
    assert (call.problem(offered) is None) == (depth == 0 or not readable)


@settings(max_examples=40, deadline=None)
@given(DEPTHS)
def test_the_parsers_keep_a_call_of_any_depth_as_a_call(depth):
    arguments = f'{{"query": {nested(depth)}}}'
    text = f'<tool_call>{{"name": "search", "arguments": {arguments}}}</tool_call>'
    for parser, written in ((hermes, text), (llama3_json, f'{{"name": "search", "parameters": {arguments}}}')):
        _, calls = parser(written)
        assert [call.name for call in calls] == ["search"]
        assert calls[0].error is None or calls[0].error.startswith(
            ("arguments are not JSON", "arguments are nested more than")
        )
    turn = qwen_client.read_answer(text)
    assert [message["function_call"]["name"] for message in turn] == ["search"]
    assert qwen_client.written_call(turn[0]["function_call"]).startswith("<tool_call>")


@settings(max_examples=40, deadline=None)
@given(DEPTHS, ARGUMENTS)
def test_the_runs_count_of_tool_calls_reads_calls_of_any_shape_and_depth(depth, arguments):
    from ragbench.api import SampleRecord

    schema = TOOL_SCHEMAS[0][0]
    calls = [ToolCall("a", "search", json.dumps(arguments)), ToolCall("b", "search", f'{{"query": {nested(depth)}}}')]
    step: dict[str, Any] = {
        "kind": "llm",
        "name": "turn",
        "request": {
            "messages": [],
            "tools": [{"type": "function", "function": {"name": "search", "parameters": schema}}],
        },
        "response": {"texts": [""], "tool_calls": [[call.to_dict() for call in calls]]},
    }
    tally = BudgetTally()
    tally.add(SampleRecord.from_dict({"index": 0, "trace": [step], "prediction": {"answer": "x"}}))
    work = tally.sections()["repeated_work"]
    expected = sum(call.error is None and arguments_problem(schema, call.arguments) is not None for call in calls)
    assert work["tool_calls"] == 2 and work["invalid_tool_calls"] == expected
