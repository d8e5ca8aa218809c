"""The `vllm` engine's tool calling against the fake `vllm` module, extended with vLLM's ToolParserManager and
ChatCompletionRequest: tools reach the chat template, the model's calls are read by vLLM's parser of the
option's name (its random call ids replaced by ids derived from the text), by ragbench's own when vLLM has no
parser of the name, and a name neither has is a one-line ConfigError."""

from __future__ import annotations

import json
import re
import sys
import types
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest
from test_engine_vllm import CompletionOutput, FakeLLM, FakeTokenizer, RequestOutput, fake_vllm  # noqa: F401

from ragbench.api import ConfigError
from ragbench.api.engines import Request, Response
from ragbench.testing import load_engine

SEARCH = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}
ASKED = [{"role": "user", "content": "Who wrote it?"}]
CALL_TEXT = 'Searching.<tool_call>\n{"name": "search", "arguments": {"query": "author"}}\n</tool_call>'
SAMPLED: list[dict[str, Any]] = []  # the SamplingParams the fake LLM was given, in order


class ToolTokenizer(FakeTokenizer):
    """The fake's characters-are-tokens tokenizer with a template that renders tools and tool turns."""

    chat_template = "... {% for tool in tools %} ..."

    def apply_chat_template(self, messages, tokenize=True, add_generation_prompt=False, tools=None):
        turns = "".join(f"<{m['role']}>{m['content'] or ''}{json.dumps(m.get('tool_calls', ''))}" for m in messages)
        return (f"<tools>{json.dumps(tools)}</tools>" if tools else "") + turns + "<assistant>"


def answer(prompt: Any, params: Any) -> RequestOutput:
    SAMPLED.append(params.kwargs)
    ids = prompt["prompt_token_ids"]
    text = CALL_TEXT if "<tools>" in "".join(chr(i) for i in ids) else "plain"
    return RequestOutput(None, ids, [CompletionOutput(0, text, [ord(c) for c in text])])


class FakeHermesParser:
    """vLLM's Hermes2ProToolParser as the fake's ToolParserManager gives it: random ids, the request kept."""

    seen: ClassVar[list[Any]] = []
    made: ClassVar[int] = 0

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        FakeHermesParser.made += 1

    def adjust_request(self, request: Any) -> Any:
        """As vLLM's Hermes parser: special tokens kept in the text (a <tool_call> may be one)."""
        request.skip_special_tokens = False
        return request

    def extract_tool_calls(self, text: str, request: Any) -> Any:
        FakeHermesParser.seen.append(request)
        blocks = [json.loads(b) for b in re.findall(r"<tool_call>(.*?)</tool_call>", text, re.S)]
        calls = [
            SimpleNamespace(
                id="chatcmpl-tool-0f3a",
                type="function",
                function=SimpleNamespace(name=b["name"], arguments=json.dumps(b["arguments"], ensure_ascii=False)),
            )
            for b in blocks
        ]
        return SimpleNamespace(
            tools_called=bool(calls), tool_calls=calls, content=text[: text.find("<tool_call>")] or None
        )


class FakeToolParserManager:
    @staticmethod
    def get_tool_parser(name: str) -> type:
        if name != "hermes":
            raise KeyError(f"tool helper: '{name}' not found in tool_parsers")
        return FakeHermesParser


@pytest.fixture
def tool_vllm(fake_vllm, monkeypatch):
    parsers = types.ModuleType("vllm.entrypoints.openai.tool_parsers")
    parsers.ToolParserManager = FakeToolParserManager
    protocol = types.ModuleType("vllm.entrypoints.openai.protocol")
    protocol.ChatCompletionRequest = lambda **fields: SimpleNamespace(**fields)
    monkeypatch.setitem(sys.modules, "vllm.entrypoints.openai.tool_parsers", parsers)
    monkeypatch.setitem(sys.modules, "vllm.entrypoints.openai.protocol", protocol)
    monkeypatch.setattr(FakeLLM, "get_tokenizer", lambda self: ToolTokenizer())
    monkeypatch.setattr(FakeLLM, "answer", staticmethod(answer))
    FakeHermesParser.seen, FakeHermesParser.made = [], 0
    SAMPLED.clear()
    return fake_vllm


def test_vllms_own_parser_reads_the_calls_of_a_tool_request(tool_vllm):
    engine = load_engine("vllm:m", tool_parser="hermes")
    request = Request.chat(ASKED, tools=[SEARCH], tool_choice="auto")
    plain, called = engine.generate([Request.chat(ASKED), request])
    assert isinstance(called, Response) and called.finish_reason == "tool_calls" and called.text == "Searching."
    (call,) = called.tool_calls
    assert (call.name, call.arguments, call.raw_arguments) == ("search", {"query": "author"}, '{"query": "author"}')
    assert call.id.startswith("call_") and engine.generate([request])[0].tool_calls[0].id == call.id  # not random
    assert FakeHermesParser.made == 1  # one parser for the tools offered, not one per request (Llama's cost 60 ms)
    assert FakeHermesParser.seen[0].tools == [SEARCH] and FakeHermesParser.seen[0].tool_choice == "auto"
    assert isinstance(plain, Response) and plain.text == "plain" and plain.choice_tool_calls is None
    # the server's adjust_request reached the tool request's sampling, not the plain one's
    assert [params["skip_special_tokens"] for params in SAMPLED[:2]] == [True, False]


def test_a_request_that_rules_tools_out_is_neither_adjusted_nor_parsed(tool_vllm):
    (answered,) = load_engine("vllm:m", tool_parser="hermes").generate(
        [Request.chat(ASKED, tools=[SEARCH], tool_choice="none")]
    )
    assert isinstance(answered, Response) and answered.text == CALL_TEXT and answered.choice_tool_calls is None
    assert SAMPLED[0]["skip_special_tokens"] is True and not FakeHermesParser.seen


def test_ragbenchs_parser_serves_a_name_vllm_lacks(tool_vllm, monkeypatch):
    monkeypatch.setattr(
        FakeLLM,
        "answer",
        staticmethod(
            lambda prompt, params: RequestOutput(
                None,
                prompt["prompt_token_ids"],
                [CompletionOutput(0, '{"name": "search", "parameters": {"query": "x"}}', [1])],
            )
        ),
    )
    called = load_engine("vllm:m", tool_parser="llama3_json").generate([Request.chat(ASKED, tools=[SEARCH])])[0]
    assert (
        isinstance(called, Response) and called.tool_calls[0].arguments == {"query": "x"} and not FakeHermesParser.seen
    )


def test_a_parser_no_one_has_is_a_config_error_and_no_parser_refuses_the_request(tool_vllm):
    with pytest.raises(ConfigError, match="no tool parser named 'nope'"):
        load_engine("vllm:m", tool_parser="nope")
    refused = load_engine("vllm:m").generate([Request.chat(ASKED, tools=[SEARCH])])[0]
    assert not isinstance(refused, Response) and "tool_parser=NAME" in str(refused)
