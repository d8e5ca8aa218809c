"""Properties of `search_agent`'s qwen_client form (plugins/search_agent/qwen_client.py, qwen_agent 0.0.27's text
function calling): any turn it writes back (a text or none, then any calls with any names and JSON arguments, any
unicode) reads back as the same turn, as qwen_agent reads its own writing; the run record pairs each call with the
result right after it as qwen_client's `_persist_response` does; MCP's text of a result is fastmcp's."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ragbench.plugins.search_agent.qwen_client import assistant_text, mcp_text, read_answer, run_record

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=6,
)
CALL = st.builds(
    lambda name, arguments: {
        "role": "assistant",
        "content": "",
        "function_call": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    },
    st.text(min_size=1, max_size=12),
    st.dictionaries(st.text(max_size=6), JSON, max_size=3),
)
TEXT = st.text(max_size=20).filter(lambda text: "<tool_call>" not in text and text.strip())


@given(st.one_of(st.none(), TEXT), st.lists(CALL, max_size=3))
def test_a_turn_written_back_reads_back_as_the_same_turn(text: str | None, calls: list[dict[str, Any]]) -> None:
    """The same calls in the same order; the text with the newline written before the first call where it ends
    in none (qwen_agent reads it back so too)."""
    turn = ([{"role": "assistant", "content": text}] if text is not None else []) + calls
    if not turn:
        return
    read = read_answer(assistant_text(turn))
    if text is not None and calls and not text.endswith("\n"):
        turn[0] = turn[0] | {"content": text + "\n"}
    assert read == turn


def test_of_calls_made_in_one_turn_only_the_last_is_recorded_with_an_output_the_first_one() -> None:
    """qwen_client pairs a call with the function message right after it: two searches in one turn are
    recorded as (no output, the first search's output), and only that output's docids count as retrieved."""
    call = {"role": "assistant", "content": ""}
    first = call | {"function_call": {"name": "search-server-search", "arguments": '{"query": "a"}'}}
    second = call | {"function_call": {"name": "search-server-search", "arguments": '{"query": "b"}'}}
    response = [
        first,
        second,
        {"role": "function", "name": "search-server-search", "content": '[{"docid": "1", "snippet": "x"}]'},
        {"role": "function", "name": "search-server-search", "content": '[{"docid": "2", "snippet": "y"}]'},
        {"role": "assistant", "content": " The answer. "},
    ]
    record = run_record(response)
    assert [item["output"] for item in record["result"]] == [None, '[{"docid": "1", "snippet": "x"}]', "The answer."]
    assert record["tool_call_counts"] == {"search": 2}
    assert record["retrieved_docids"] == ["1"]


def test_mcp_text_is_fastmcps_one_hit_alone_nothing_an_execute_error_unicode_as_written() -> None:
    hit = {"docid": "d1", "score": 1.5, "snippet": "Zoë"}
    assert mcp_text([hit]) == json.dumps(hit, ensure_ascii=False, indent=2)
    assert mcp_text([hit, hit]) == json.dumps([hit, hit], ensure_ascii=False, indent=2)
    assert "Zoë" in mcp_text([hit])
    assert mcp_text([]) == mcp_text(None) == "execute error"


def test_a_call_that_is_no_json_is_read_as_qwen_agent_reads_it() -> None:
    """The name after `"name": "`, the arguments as written less their last character; written back as a
    JSON string."""
    text = '<tool_call>\n{"name": "search-server-search", "arguments": {"query": unquoted}\n</tool_call>'
    (call,) = read_answer(text)
    assert call["function_call"] == {"name": "search-server-search", "arguments": '{"query": unquoted'}
    assert assistant_text([call]) == (
        '<tool_call>\n{"name": "search-server-search", "arguments": "{\\"query\\": unquoted"}\n</tool_call>'
    )


def test_a_call_nested_too_deeply_to_parse_is_read_and_written_back_as_one_that_is_no_json() -> None:
    """Arguments nested 100,000 deep (JSON that Python's parser cannot follow): a call like one that is no JSON,
    never a RecursionError."""
    deep = "[" * 100_000 + "]" * 100_000
    (call,) = read_answer(f'<tool_call>\n{{"name": "search-server-search", "arguments": {deep}}}\n</tool_call>')
    assert call["function_call"] == {"name": "search-server-search", "arguments": deep}
    assert assistant_text([call]) == (
        f'<tool_call>\n{{"name": "search-server-search", "arguments": "{deep}"}}\n</tool_call>'
    )


def test_a_block_of_json_that_is_empty_or_false_is_no_call() -> None:
    """qwen_agent keeps a parsed block only where it is truthy (`if fn:`); checked against qwen_agent 0.0.27's
    NousFnCallPrompt.postprocess_fncall_messages."""
    for written in ("null", "0", "false", '""', "[]", "{}"):
        assert read_answer(f"Thinking.\n<tool_call>\n{written}\n</tool_call>") == [
            {"role": "assistant", "content": "Thinking.\n"}
        ]
