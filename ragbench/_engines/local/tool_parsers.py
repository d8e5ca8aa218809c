"""Tool calls read from a model's text, for the engines that run the model themselves (`hf`; `vllm` when its
own ToolParserManager has no parser of the name): `--model-arg tool_parser=NAME` names the model family's format.
Each reads a text as vLLM's parser of its name does (vllm.tool_parsers, 0.33.0; tests/data/tool_parsers/):

  hermes       <tool_call>{"name": ..., "arguments": {...}}</tool_call>, one block per call, the last one may be
               left open (Qwen 2.5 / 3, Hermes 2 Pro): the text before the first block is the content. A block
               that is no object with a "name" and "arguments" makes the whole text content.
  llama3_json  {"name": ..., "parameters": {...}} (or "arguments"), each object that starts outside the one
               before (Llama 3.1 / 3.2 write them after <|python_tag|>, separated by "; "): the text around them
               is dropped. An object without a "name" and "parameters" or "arguments" makes the whole text content.

A call's argument text is `json.dumps(arguments, ensure_ascii=False)` of what the model wrote. Where vLLM reads a
call whose JSON does not parse as text, ragbench keeps it as a call (the calls before it too): a block, or an
object, that begins `{"name": "..."` and then is no JSON is that function called with the argument text as
written (`ToolCall.error` says why it is no JSON). So is a call whose JSON is nested deeper than ragbench reads
(`CALL_DEPTH`: its arguments more than MAX_DEPTH levels, ragbench._values.json_values), found before the parser,
which would fail on it. Call ids are derived from the text (`call_<digest>_<n>`), so
an answer, and its cache entry, is the same on every run.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Literal, get_args

from ..._values.engine_errors import EngineError, RequestError
from ..._values.json_values import MAX_DEPTH, TooDeep, json_of, nested_deeper
from ..._values.llm_request import Request
from ..._values.llm_responses import Response
from ..._values.sampling import Sampling
from ..._values.tool_calls import ToolCall
from ..chat_messages import ChatMessage

Parsed = tuple[str, tuple[ToolCall, ...]]  # (the content, the calls)
_HERMES = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*)", re.S)
_CALL_START = re.compile(r'\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"')
_ARGUMENTS = re.compile(r'"(?:arguments|parameters)"\s*:\s*(.*?)\s*\}?\s*$', re.S)
_OBJECT_START = re.compile(r"\{")
CALL_DEPTH = MAX_DEPTH + 1  # a call's object around its arguments, which are read to MAX_DEPTH levels (ToolCall)


def call_id(text: str, n: int) -> str:
    return f"call_{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}_{n}"


def _call(data: Any, keys: tuple[str, ...], text: str, n: int) -> ToolCall | None:
    """The call a parsed JSON value makes: an object with a string "name" and the first of `keys` it has; None
    when it is no such object (then, as in vLLM, the whole text is content)."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    key = next((k for k in keys if k in data), None)
    return None if key is None else ToolCall(call_id(text, n), data["name"], json.dumps(data[key], ensure_ascii=False))


def _malformed_call(written: str, text: str, n: int) -> ToolCall | None:
    """A call whose JSON does not parse, kept: the function `written` begins by naming, and the argument text as
    written; None when it names none. Where the argument text alone reads as JSON, the fault lies before it (a
    name left unquoted, a key cut short): the call's whole text is its argument text, so it reads as malformed."""
    written = written.strip()
    name = _CALL_START.match(written)
    try:
        named = json.loads(f'"{name.group(1)}"') if name else None
    except ValueError:
        named = None
    if name is None or named is None:
        return None
    found = _ARGUMENTS.search(written, name.end())
    arguments = found.group(1) if found else ""
    if _is_json(arguments):
        arguments = written
    return ToolCall(call_id(text, n), named, arguments)


def _is_json(written: str) -> bool:
    try:
        json_of(written)
    except ValueError:
        return False
    return True


def hermes(text: str) -> Parsed:
    start = text.find("<tool_call>")
    if start < 0:
        return text, ()
    calls = []
    for n, (closed, left_open) in enumerate(_HERMES.findall(text)):
        written = closed or left_open
        try:
            call = _call(json_of(written, CALL_DEPTH), ("arguments",), text, n)
        except ValueError:
            call = _malformed_call(written, text, n)
        if call is None:
            return text, ()
        calls.append(call)
    return text[:start], tuple(calls)


def llama3_json(text: str) -> Parsed:
    decoder, end = json.JSONDecoder(), -1
    calls: list[ToolCall] = []
    for match in _OBJECT_START.finditer(text):
        if match.start() <= end:  # inside (or just after) the object before: vLLM skips it
            continue
        try:
            if nested_deeper(text, CALL_DEPTH, match.start()):
                raise TooDeep(f"nested more than {CALL_DEPTH} levels deep")
            data, end = decoder.raw_decode(text, match.start())
        except ValueError:  # a call cut short, malformed or too deep: the rest is its text
            call = _malformed_call(text[match.start() :], text, len(calls))
            if call is None:
                return text, ()
            return "", (*calls, call)
        call = _call(data, ("arguments", "parameters"), text, len(calls))
        if call is None:
            return text, ()
        calls.append(call)
    return ("", tuple(calls)) if calls else (text, ())


# As vLLM's Hermes parser adjusts a tool request: special tokens kept in the text (a tokenizer may mark <tool_call> so).
KEEPS_SPECIAL_TOKENS = frozenset({"hermes"})


def tool_sampling(request: Request, parser: str | None) -> Sampling:
    """The sampling `request` is generated with where `parser` reads its calls."""
    if parser in KEEPS_SPECIAL_TOKENS and request.tools and request.tool_choice != "none":
        return replace(request.sampling, skip_special_tokens=False)
    return request.sampling


ParserName = Literal["hermes", "llama3_json"]  # an engine's `tool_parser` option
TOOL_PARSERS: dict[str, Callable[[str], Parsed]] = {"hermes": hermes, "llama3_json": llama3_json}
PARSER_NAMES: tuple[str, ...] = get_args(ParserName)
# Raised whenever how an engine decodes or reads a tool request's text changes, so that answers cached before
# (keyed by the engine id) are not served as if read the new way. 2: vLLM's server adjustment and parse step.
TOOL_READING = 2


def tool_parser_id(parser: str | None) -> str:
    """What an engine's id says of its tool parser (nothing without one)."""
    return f";tool_parser={parser};tool_reading={TOOL_READING}" if parser else ""


def with_tool_calls(
    request: Request, result: Response | EngineError, parser: Callable[[str], Parsed] | None, engine: str
) -> Response | EngineError:
    """`result` (a Response or an EngineError) of `request` with each completion's tool calls read by `parser`
    when the request offered tools and did not rule them out (tool_choice "none": the text is the answer, as vLLM's
    server leaves it): a completion that called tools keeps its content as text ("" where that is only whitespace,
    as vLLM's server gives it), finish_reason "tool_calls" when the first did."""
    if not request.tools or request.tool_choice == "none" or not isinstance(result, Response):
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
        texts=["" if calls and not content.strip() else content for content, calls in parsed],
        choice_tool_calls=[calls for _, calls in parsed],
        finish_reason=finish,
    )


def template_messages(messages: list[ChatMessage]) -> list[Mapping[str, object]]:
    """Messages as chat templates read them: a tool call's arguments as the object they hold (the templates
    of Qwen, Llama and Hermes write `arguments | tojson`), as vLLM passes them; text that is no JSON as is."""
    out: list[Mapping[str, object]] = []
    for message in messages:
        if message.get("tool_calls"):
            out.append(
                {
                    **message,
                    "tool_calls": [
                        {**call, "function": {**call["function"], "arguments": _object(call["function"]["arguments"])}}
                        for call in message["tool_calls"]
                    ],
                }
            )
        else:
            out.append(message)
    return out


def _object(arguments: str) -> Any:
    try:
        return json_of(arguments)
    except ValueError:
        return arguments
