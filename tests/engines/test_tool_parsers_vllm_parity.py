"""ragbench's `hermes` and `llama3_json` tool parsers read a model's text as vLLM's parsers of those names do:
tests/data/tool_parsers/vllm_parsers.json holds what vLLM 0.33.0's own parsers (`extract_tool_calls`, run
unchanged by record_vllm.py beside it, with a ChatCompletionRequest offering two tools) read from 65 hand-written
outputs and 300 generated ones (seed 49), each through both parsers. For every one ragbench gives the same
content (vLLM's None is ragbench's "") and the same calls, in order, by name and argument text. Call ids are not
compared: vLLM's are random, ragbench's are its own, derived from the text.

The one deliberate difference (issue 49: a call whose arguments are not valid JSON is kept and counted, never
dropped): where a call's JSON does not parse (cut short, a comma too many, a quote lost), vLLM returns the whole
text as content and no call; ragbench keeps that call, as the function it names with the text as written, and
the calls before it. Those cases are listed below by name.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ragbench.api.engines import TOOL_PARSERS
from support import paths

RECORDED = json.loads((paths.DATA / "tool_parsers" / "vllm_parsers.json").read_text("utf-8"))
CASES = {case["case"]: case for case in RECORDED["cases"]}

# Where vLLM reads a call whose JSON does not parse as text: what ragbench reads instead (content, calls).
KEPT_MALFORMED: dict[tuple[str, str], tuple[str, list[tuple[str, str]]]] = {
    ("hermes", "hand: hermes cut short"): ("Looking.", [("search", '{"query": "Ann')]),
    ("llama3_json", "hand: hermes cut short"): ("", [("search", '{"query": "Ann')]),
    ("hermes", "hand: hermes cut short after name"): ("", [("search", "")]),
    ("llama3_json", "hand: hermes cut short after name"): ("", [("search", "")]),
    ("hermes", "hand: hermes second call cut short"): ("", [("search", '{"query": "a"}'), ("get_document", "")]),
    ("llama3_json", "hand: hermes second call cut short"): ("", [("search", '{"query": "a"}'), ("get_document", "")]),
    ("hermes", "hand: hermes malformed json"): ("", [("search", '{"query": "x",}')]),
    ("llama3_json", "hand: hermes malformed json"): ("", [("search", '{"query": "x",}}\n</tool_call>')]),
    ("llama3_json", "hand: llama cut short"): ("", [("search", '{"query":')]),
    ("llama3_json", "hand: llama second call cut short"): ("", [("search", '{"query": "a"}'), ("search", "")]),
    ("llama3_json", "hand: llama malformed json"): ("", [("search", '{"query": "x",}')]),
}
# The generated outputs with a call damaged (cut short, a comma too many, a quote lost) the same way.
GENERATED_MALFORMED = {
    "hermes": (14, 30, 64, 75, 124, 126, 275),
    "llama3_json": (2, 4, 14, 30, 32, 43, 50, 64, 66, 75, 77, 124, 126, 150, 152, 162, 163, 187, 224, 230, 237)
    + (239, 248, 254, 260, 266, 274, 275, 278, 288),
}
PARSERS = ("hermes", "llama3_json")


def malformed_cases(parser: str) -> set[str]:
    hand = {case for name, case in KEPT_MALFORMED if name == parser}
    return hand | {f"generated {n:03d}" for n in GENERATED_MALFORMED[parser]}


def ragbench_reading(parser: str, text: str) -> dict[str, Any]:
    content, calls = TOOL_PARSERS[parser](text)
    return {"content": content, "calls": [[call.name, call.raw_arguments] for call in calls]}


def test_the_recording_is_vllms_over_a_varied_set():
    assert RECORDED["vllm"] == "0.33.0" and len(CASES) == 365
    for parser in PARSERS:  # each parser both found calls and read text as content, many times
        called = sum(case[parser]["tools_called"] for case in CASES.values())
        assert 50 < called < len(CASES) - 50


@pytest.mark.parametrize("parser", PARSERS)
def test_ragbench_reads_every_recorded_output_as_vllm_does(parser):
    differ = {}
    for name, case in CASES.items():
        if name in malformed_cases(parser):
            continue
        vllm = case[parser]
        expected = {"content": vllm["content"] or "", "calls": vllm["calls"]}
        if ragbench_reading(parser, case["text"]) != expected:
            differ[name] = (case["text"], expected, ragbench_reading(parser, case["text"]))
    assert not differ


@pytest.mark.parametrize("parser", PARSERS)
def test_a_call_whose_json_does_not_parse_is_kept_where_vllm_reads_text(parser):
    for name in sorted(malformed_cases(parser)):
        text, vllm = CASES[name]["text"], CASES[name][parser]
        assert (vllm["tools_called"], vllm["content"], vllm["calls"]) == (False, text, [])
        content, calls = TOOL_PARSERS[parser](text)
        assert any(call.error for call in calls), name  # the call that does not parse is kept, marked malformed
        assert content == (text[: text.find("<tool_call>")] if parser == "hermes" else ""), name
        if (parser, name) in KEPT_MALFORMED:
            assert (content, [(c.name, c.raw_arguments) for c in calls]) == KEPT_MALFORMED[parser, name]
