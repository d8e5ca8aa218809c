"""The `vllm` engine's reading of vLLM's own answer objects, without vLLM: tests/data/tool_parsers/vllm_server.json
holds what vLLM 0.33.0's classes returned where ragbench calls them (record_vllm_server.py beside it, run with
real vLLM): the sampling settings its server's adjust_request made, `vllm.parser`'s parse (FunctionCall fields)
and the tool parser's `extract_tool_calls` (ExtractedToolCallInformation fields) for hermes, llama3_json,
qwen3_xml and pythonic under auto, required and named tool choices. Here fake vLLM modules hand those recorded
objects back, by their recorded field names, and ragbench must give the answer it gave with the real classes:
content None read as "", whitespace-only content beside calls as "", several calls in order, calls read under a
forced tool choice, a call whose JSON does not parse kept (where vLLM reads the text as the answer), ids its own."""

from __future__ import annotations

import json
import sys
import types
from types import SimpleNamespace
from typing import Any

import pytest

from ragbench._engines.local.tool_parsers import with_tool_calls
from ragbench._engines.vllm.tools import ToolCallReader
from ragbench.api.engines import Request, Response
from support import paths

RECORDED = json.loads((paths.DATA / "tool_parsers" / "vllm_server.json").read_text("utf-8"))
CASES = RECORDED["cases"]


def objects(value: Any) -> Any:
    """Recorded fields as attributes, as vLLM's objects hold them."""
    if isinstance(value, dict):
        return SimpleNamespace(**{key: objects(item) for key, item in value.items()})
    return [objects(item) for item in value] if isinstance(value, list) else value


def recorded(name: str, asked: Any, text: str | None = None) -> dict[str, Any]:
    choice = asked.tool_choice if isinstance(asked.tool_choice, (str, type(None))) else "search"
    return next(
        case
        for case in CASES
        if (case["parser"], case["tool_choice"] or "auto") == (name, choice) and text in (None, case["text"])
    )


class ChatCompletionRequest(SimpleNamespace):
    def __init__(self, **fields: Any) -> None:
        super().__init__(**{"skip_special_tokens": None, "structured_outputs": None, "tool_choice": "auto", **fields})
        if isinstance(self.tool_choice, dict):
            self.tool_choice = self.tool_choice["function"]["name"]


def replaying(name: str) -> type:
    """vLLM's parser `name` (the server's Parser, or the tool parser of a release without one), answering as
    recorded."""

    class Replay:
        def __init__(self, tokenizer: Any, tools: Any = None) -> None:
            self.tokenizer = tokenizer

        def adjust_request(self, asked: Any) -> Any:
            for key, value in recorded(name, asked)["adjusted"].items():
                setattr(asked, key, value)
            return asked

        def parse(self, text: str, asked: Any, enable_auto_tools: bool = False) -> tuple[Any, Any, Any]:
            parsed = objects(recorded(name, asked, text)["parsed"])
            assert enable_auto_tools
            return parsed.reasoning, parsed.content, parsed.calls

        def extract_tool_calls(self, text: str, asked: Any) -> Any:
            return objects(recorded(name, asked, text)["extracted"])

    return Replay


def tool_parser_of(name: str) -> type:
    if name not in {case["parser"] for case in CASES}:
        raise KeyError(name)
    return replaying(name)


@pytest.fixture(params=["vllm.parser", "tool parser only"])
def recorded_vllm(request, monkeypatch):
    """vLLM's modules as 0.33.0 lays them out; without `vllm.parser` as releases before it."""
    parsers = types.ModuleType("vllm.tool_parsers")
    parsers.ToolParserManager = SimpleNamespace(get_tool_parser=tool_parser_of)
    protocol = types.ModuleType("vllm.entrypoints.openai.chat_completion.protocol")
    protocol.ChatCompletionRequest = ChatCompletionRequest
    server = types.ModuleType("vllm.parser")
    server.ParserManager = SimpleNamespace(
        get_parser=lambda tool_parser_name, enable_auto_tools: tool_parser_of(tool_parser_name)
    )
    for module in (parsers, protocol) + ((server,) if request.param == "vllm.parser" else ()):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    if request.param != "vllm.parser":
        monkeypatch.setitem(sys.modules, "vllm.parser", None)  # an import of it fails, as on a vLLM without that module
    return request.param


def answered(case: dict[str, Any]) -> tuple[Response, dict[str, Any]]:
    choice = {"tool_choice": case["tool_choice"]} if case["tool_choice"] else {}
    request = Request.chat([{"role": "user", "content": "Who?"}], tools=[RECORDED["tool"]], **choice)
    reader = ToolCallReader(case["parser"], lambda: object())
    return with_tool_calls(request, Response(texts=[case["text"]]), reader.parser(request), "vllm"), reader.sampling(
        request
    )


def test_ragbench_reads_vllms_answer_objects_as_it_did_with_the_real_classes(recorded_vllm):
    read = 0
    for case in CASES:
        if recorded_vllm != "vllm.parser" and (case["extracted"] is None or case["tool_choice"] not in (None, "auto")):
            continue  # before vllm.parser the server read a forced tool choice's JSON itself, not by the parser
        answer, sampling = answered(case)
        calls = [[call.name, call.raw_arguments] for call in answer.tool_calls]
        assert {"content": answer.text, "calls": calls} == case["ragbench"], case
        assert all(call.id.startswith("call_") for call in answer.tool_calls)
        assert sampling == {key: value for key, value in case["adjusted"].items() if value is not None}
        read += 1
    assert read >= (16 if recorded_vllm == "vllm.parser" else 9)


def test_the_recording_holds_what_the_conversion_must_handle():
    contents = [case["parsed"]["content"] for case in CASES if case["parsed"]["calls"]]
    assert None in contents and "Looking." in contents and " \n" in [c["extracted"]["content"] for c in CASES[2:3]]
    assert any(len(case["parsed"]["calls"]) > 1 for case in CASES)
    assert {key for case in CASES for call in case["parsed"]["calls"] for key in call} == {"name", "arguments"}
    assert any(case["adjusted"]["structured_outputs"] for case in CASES)
    assert any(case["adjusted"]["skip_special_tokens"] is False for case in CASES)
    # a call whose JSON does not parse: vLLM reads the text as the answer, ragbench keeps the call
    assert any(not case["parsed"]["calls"] and case["ragbench"]["calls"] for case in CASES)
