"""Tool calls read from a model's text, for the engines that run the model themselves (`hf`; `vllm` when its
own ToolParserManager has no parser of the name): `--model-arg tool_parser=NAME` names the model family's format.

  hermes       <tool_call>{"name": ..., "arguments": {...}}</tool_call>, one block per call (Qwen 2.5 / 3,
               Hermes 2 Pro): the text before the first block is the content.
  llama3_json  {"name": ..., "parameters": {...}} (or "arguments"), optionally after <|python_tag|>, several
               separated by "; " (Llama 3.1 / 3.2): the whole text is the calls.

As vLLM's parsers of these names do, a call's argument text is `json.dumps(arguments, ensure_ascii=False)` of
what the model wrote. A call the model wrote but whose JSON does not parse is kept, not read as text: its name
and the argument text as written (`ToolCall.error` says why it is no JSON). Call ids are derived from the text
(`call_<digest>_<n>`), so an answer, and its cache entry, is the same on every run.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal, get_args

from .._values.llm_calls import Request, RequestError, Response
from .._values.tool_calls import ToolCall

Parsed = tuple[str, tuple[ToolCall, ...]]  # (the content, the calls)
_HERMES = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.S)
_NAME = re.compile(r'"name"\s*:\s*"((?:[^"\\]|\\.)*)"')
_ARGUMENTS = re.compile(r'"(?:arguments|parameters)"\s*:\s*(.*?)\s*\}?\s*$', re.S)
_PYTHON_TAG = "<|python_tag|>"


def call_id(text: str, n: int) -> str:
    return f"call_{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}_{n}"


def _read_call(block: str, text: str, n: int) -> ToolCall | None:
    """The call one JSON object of the model's text makes; the name and the argument text as written when the
    object is no JSON; None when it names no function (then it is text)."""
    try:
        data = json.loads(block)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("name"), str):
        arguments = data.get("arguments", data.get("parameters", {}))
        return ToolCall(call_id(text, n), data["name"], json.dumps(arguments, ensure_ascii=False))
    name, arguments = _NAME.search(block), _ARGUMENTS.search(block)
    if data is not None or name is None:
        return None
    return ToolCall(call_id(text, n), json.loads(f'"{name.group(1)}"'), arguments.group(1) if arguments else "")


def hermes(text: str) -> Parsed:
    start = text.find("<tool_call>")
    if start < 0:
        return text, ()
    calls = [_read_call(block.strip(), text, n) for n, block in enumerate(_HERMES.findall(text[start:]))]
    if not calls or None in calls:
        return text, ()
    return text[:start], tuple(c for c in calls if c is not None)


def llama3_json(text: str) -> Parsed:
    body = text.removeprefix(_PYTHON_TAG)
    if not body.lstrip().startswith("{"):
        return text, ()
    decoder, at = json.JSONDecoder(), 0
    calls: list[ToolCall] = []
    body = body.strip()
    while at < len(body):
        try:
            data, end = decoder.raw_decode(body, at)
        except ValueError:  # a call cut short or malformed: the rest is its text
            call = _read_call(body[at:], text, len(calls))
            if call is None:
                return text, ()
            calls.append(call)
            break
        call = _read_call(json.dumps(data), text, len(calls)) if isinstance(data, dict) else None
        if call is None:
            return text, ()
        calls.append(call)
        rest = body[end:].lstrip()
        at = len(body) - len(rest.removeprefix(";").lstrip())
    return "", tuple(calls)


ParserName = Literal["hermes", "llama3_json"]  # an engine's `tool_parser` option
TOOL_PARSERS: dict[str, Callable[[str], Parsed]] = {"hermes": hermes, "llama3_json": llama3_json}
PARSER_NAMES: tuple[str, ...] = get_args(ParserName)


def with_tool_calls(request: Request, result: Any, parser: Callable[[str], Parsed] | None, engine: str) -> Any:
    """`result` (a Response or an EngineError) of `request` with each completion's tool calls read by `parser`
    when the request offered tools: a completion that called tools keeps its content as text, finish_reason
    "tool_calls" when the first did."""
    if not request.tools or not isinstance(result, Response):
        return result
    if parser is None:
        return RequestError(
            f"{engine} engine: a request with tools needs --model-arg tool_parser=NAME (the model "
            f"family's format: {', '.join(PARSER_NAMES)})"
        )
    parsed = [parser(text) for text in result.texts]
    finish = "tool_calls" if parsed and parsed[0][1] and result.finish_reason == "stop" else result.finish_reason
    return replace(
        result,
        texts=[content for content, _ in parsed],
        choice_tool_calls=[calls for _, calls in parsed],
        finish_reason=finish,
    )


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as chat templates read them: a tool call's arguments as the object they hold (the templates
    of Qwen, Llama and Hermes write `arguments | tojson`), as vLLM passes them; text that is no JSON as is."""
    out = []
    for message in messages:
        if message.get("tool_calls"):
            message = {
                **message,
                "tool_calls": [
                    {**call, "function": {**call["function"], "arguments": _object(call["function"]["arguments"])}}
                    for call in message["tool_calls"]
                ],
            }
        out.append(message)
    return out


def _object(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments
