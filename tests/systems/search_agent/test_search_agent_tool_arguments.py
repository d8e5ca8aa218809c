"""A search agent's tool call whose arguments do not fit the tool's parameters (`{"query": 5}`, `null`, a key
written twice whose last value is no string, a key the tool does not take) is answered as BrowseComp-Plus's
clients answer a failing call, before the tool runs, and counted; the run finishes with every example saved.
Property: whatever JSON a call's arguments hold (and whatever key is written twice), the tool runs exactly when
they fit, with a string."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_property_tool_arguments import ARGUMENTS, JSON
from test_search_agent import TASK, agent_run, scripted

from ragbench.api import Document
from ragbench.plugins.search_agent import qwen_client
from ragbench.plugins.search_agent.tools import OPENAI_CLIENT, OSS_CLIENT, answer_call

INVALID = {
    "a number": {"query": 5},
    "null": {"query": None},
    "a key written twice, the last a number": '{"query": "Rufea", "query": 5}',
    "a key the tool does not take": {"query": "Rufea", "k": 3},
}


@pytest.mark.timeout(300)  # a safety net: the run used to sit idle forever on {"query": 5}
@pytest.mark.parametrize("arguments", INVALID.values(), ids=INVALID.keys())
def test_a_search_call_whose_arguments_do_not_fit_is_answered_with_the_error_and_counted(tmp_path, arguments):
    rules = [
        {"pattern": "Error executing search: ", "response": "Zealion"},
        {"pattern": "Question: ", "response": {"tool_calls": [{"id": "c", "name": "search", "arguments": arguments}]}},
    ]
    results, lines = agent_run(tmp_path, scripted(tmp_path, rules), limit=2)
    assert [(line["error"], line["prediction"]["answer"]) for line in lines] == [(None, "Zealion")] * 2
    for line in lines:
        told = [step for step in line["trace"] if step["kind"] == "llm"][1]["request"]["messages"][-1]
        assert told["role"] == "tool" and told["content"].startswith('Error executing search: arguments["')
        assert not [step for step in line["trace"] if step["kind"] == "retrieval"]  # the search never ran
        extras = line["prediction"]["extras"]
        assert extras["invalid_tool_calls"] == 1 and extras["result"][0]["output"] is None  # openai_client's record
    assert results["repeated_work"][TASK]["invalid_tool_calls"] == 2
    assert results["system_stats"][TASK]["invalid_tool_calls"] == 2


def test_the_answer_says_what_does_not_fit(tmp_path):
    rules = [
        {"pattern": "Error executing search: ", "response": "Zealion"},
        {
            "pattern": "Question: ",
            "response": {"tool_calls": [{"id": "c", "name": "search", "arguments": {"query": 5}}]},
        },
    ]
    _, [line] = agent_run(tmp_path, scripted(tmp_path, rules))
    told = [step for step in line["trace"] if step["kind"] == "llm"][1]["request"]["messages"][-1]["content"]
    assert told == 'Error executing search: arguments["query"]: 5 is not a string'


@pytest.mark.timeout(300)
def test_qwen_clients_call_whose_arguments_do_not_fit_is_answered_as_qwen_agent_answers_a_failing_tool(tmp_path):
    call = '<tool_call>\n{"name": "search-server-search", "arguments": {"query": 5}}\n</tool_call>'
    rules = [{"pattern": "An error occurred", "response": "Zealion"}, {"pattern": "", "response": call}]
    results, [line] = agent_run(tmp_path, scripted(tmp_path, rules), system_args={"client": "qwen_client"})
    assert (line["error"], line["prediction"]["answer"]) == (None, "Zealion")
    told = [step for step in line["trace"] if step["kind"] == "llm"][1]["request"]["messages"][-1]["content"]
    assert told == (
        "<tool_response>\nAn error occurred when calling tool `search-server-search`:\n"
        'InvalidArguments: arguments["query"]: 5 is not a string\nTraceback:\n\n</tool_response>'
    )
    assert line["prediction"]["extras"]["invalid_tool_calls"] == 1
    assert results["system_stats"][TASK]["invalid_tool_calls"] == 1
    [adherence] = results["format_adherence"][TASK]  # the run warns of them: the calls are not native
    assert (adherence["followed"], adherence["of"]) == (0, 1)


def twice(key: str, first: Any, last: Any) -> str:
    """Arguments that write `key` twice: json.loads, as the clients read them, keeps the last."""
    return f"{{{json.dumps(key)}: {json.dumps(first)}, {json.dumps(key)}: {json.dumps(last)}}}"


def argument_texts(key: str) -> st.SearchStrategy[tuple[str, Any]]:
    """(argument text, the value the clients read from it): any JSON, or `key` written twice."""
    return ARGUMENTS.map(lambda value: (json.dumps(value), value)) | st.tuples(JSON, JSON).map(
        lambda pair: (twice(key, *pair), {key: pair[1]})
    )


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(["openai_client", "oss_client", "qwen_client"]), st.data())
def test_the_search_runs_exactly_when_the_arguments_fit_and_always_with_a_string(client, data):
    key = "user_query" if client == "oss_client" else "query"
    text, value = data.draw(argument_texts(key))
    searched: list[Any] = []

    async def search(query: Any) -> Any:
        searched.append(query)
        return "hits", [Document(id="d1", title="", text="t")]

    if client == "qwen_client":
        offered = {"search-server-search": qwen_client.mcp_function("search", "d", "query")["parameters"]}
        call = {"name": "search-server-search", "arguments": text}
        answer = asyncio.run(qwen_client.call_tool(call, offered, search, lambda docid: None))
        fits = isinstance(value, dict) and isinstance(value.get(key), str)  # fastmcp takes other keys
    else:
        chosen = OPENAI_CLIENT if client == "openai_client" else OSS_CLIENT
        answer = asyncio.run(answer_call(chosen.search, text, chosen, search, None))
        fits = isinstance(value, dict) and isinstance(value.get(key), str) and set(value) == {key}
    assert searched == ([value[key]] if fits else [])
    assert answer.failed == answer.invalid == (not fits)
