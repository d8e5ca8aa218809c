"""What a hand-written answer record may hold: a `scripted` rules file's answer object, a `replay` record's
answer fields. Checked when the file is read, against what every engine's answer must be where it arrives
(ragbench._values.response_checks): a record of the wrong shape is refused before the run, in one line, instead
of failing every call it answers.

A record: "response" (its text, or the list of an n > 1 request's texts), "tool_calls" ([{"id", "name", "arguments"}, ...], or the OpenAI form
{"id", "type", "function": {"name", "arguments"}}; "arguments" an object, or the text the model wrote),
"finish_reason", and per-token data: "tokens" (strings), "logprobs" (per position, an object of tokens'
log-probabilities holding the chosen one), "token_ids", "ranks", "cumulative_logprob".
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, TypedDict

from .._values.json_values import JsonObject, JsonValue
from .._values.response_checks import FINISH_REASONS

ANSWER_FIELDS = ("response", "tool_calls", "finish_reason", "tokens", "logprobs", "token_ids", "ranks",
                 "cumulative_logprob")  # fmt: skip


class AnswerRecord(TypedDict, total=False):
    """An answer as a record holds it (the module's docstring), its fields as `record_problem` checks them."""

    response: str | list[str]
    tool_calls: list[JsonObject] | None
    finish_reason: str | None
    tokens: list[str]
    logprobs: list[dict[str, float]]
    token_ids: list[int | None] | None
    ranks: list[dict[str, int]] | None
    cumulative_logprob: float


class RecordedRequest(TypedDict, total=False):
    """A request as a record holds it (`Request.to_dict()`, read back from JSON)."""

    prompt: str
    images: list[JsonObject]  # a prompt's images: {"sha256", "media_type", "bytes"}
    messages: list[JsonObject]
    ensemble: list[JsonObject]
    tools: list[JsonObject]
    tool_choice: JsonValue
    sampling: JsonObject


class ReplayRecord(RecordedRequest, AnswerRecord, total=False):
    """A `replay` file's line: the request, and its answer or the error it failed with; a run's recording adds
    the role that made the call, the engine that answered it and the whole response (ragbench._replay)."""

    error: JsonValue  # the recorded failure, shown as it is
    role: JsonValue  # compared with the role asked for
    engine: JsonValue  # "kind:model;..." where a run recorded it
    response_data: JsonObject


def record_problem(record: Mapping[str, object]) -> str | None:
    """What makes `record`'s answer fields (the tool calls, finish reason and per-token data it has) no answer
    an engine may give, the first found; None when they are well formed."""
    return next(_problems(record), None)


def _problems(record: Mapping[str, object]) -> Iterator[str]:
    if "response" in record and not _texts(record["response"]):
        yield f'"response" {_shown(record["response"])} is not a text or a list of texts'
    if record.get("tool_calls") is not None:
        yield from _tool_call_problems(record["tool_calls"])
    finish = record.get("finish_reason")
    if finish is not None and finish not in FINISH_REASONS:
        yield f'"finish_reason" {_shown(finish)} is none of {", ".join(FINISH_REASONS)}'
    if finish == "tool_calls" and not record.get("tool_calls"):
        yield '"finish_reason" "tool_calls" without "tool_calls"'
    if "cumulative_logprob" in record and not _logprob(record["cumulative_logprob"]):
        yield f'"cumulative_logprob" {_shown(record["cumulative_logprob"])} is not a log-probability (<= 0)'
    if any(key in record for key in ("tokens", "logprobs", "token_ids", "ranks")):
        yield from _token_problems(record)


def _tool_call_problems(calls: Any) -> Iterator[str]:
    if not isinstance(calls, list):
        yield f'"tool_calls" {_shown(calls)} is not a list of {{"id", "name", "arguments"}}'
        return
    for n, call in enumerate(calls):
        where = f'"tool_calls"[{n}]'
        if not isinstance(call, dict):
            yield f'{where} {_shown(call)} is not an object {{"id", "name", "arguments"}}'
            return
        fields: tuple[str, ...]
        if "function" in call:
            function, fields = call["function"], ("id", "type", "function")
            if not isinstance(function, dict):
                yield f'{where}: "function" {_shown(function)} is not an object {{"name", "arguments"}}'
                return
            unknown = sorted(set(call) - set(fields)) + sorted(set(function) - {"name", "arguments"})
        else:
            function, fields = call, ("id", "type", "name", "arguments")
            unknown = sorted(set(call) - set(fields))
        if unknown:
            yield f"{where}: unknown key {_shown(unknown[0])} (a call has {', '.join(fields)})"
        elif not isinstance(function.get("name"), str) or not function["name"]:
            yield f'{where}: "name" {_shown(function.get("name"))} is not a tool\'s name'
        elif not isinstance(function.get("arguments", ""), (dict, str)):
            yield f'{where}: "arguments" {_shown(function["arguments"])} is not an object or a text'
        elif not isinstance(call.get("id", ""), str):
            yield f'{where}: "id" {_shown(call["id"])} is not a string'
        elif call.get("type", "function") != "function":
            yield f'{where}: "type" {_shown(call["type"])} is not "function"'


def _token_problems(record: Mapping[str, object]) -> Iterator[str]:
    tokens, dicts = record.get("tokens"), record.get("logprobs")
    if not isinstance(tokens, list) or not all(isinstance(token, str) for token in tokens):
        yield '"tokens" is not a list of strings (per-token data needs "tokens" and "logprobs")'
        return
    if not isinstance(dicts, list) or len(dicts) != len(tokens):
        yield '"logprobs" is not a list as long as "tokens"'
        return
    for position, (token, entries) in enumerate(zip(tokens, dicts)):
        if not isinstance(entries, dict) or token not in entries:
            yield f'"logprobs"[{position}] is not an object holding the chosen token {token!r}'
        elif not all(_logprob(value) for value in entries.values()):
            yield f'"logprobs"[{position}] holds a value that is not a log-probability (<= 0)'
    ids = record.get("token_ids")
    if ids is not None and (
        not isinstance(ids, list) or len(ids) != len(tokens) or not all(i is None or _count(i) for i in ids)
    ):
        yield '"token_ids" is not a list of token ids (whole numbers from 0) as long as "tokens"'
    ranks = record.get("ranks")
    if ranks is not None and (
        not isinstance(ranks, list)
        or len(ranks) != len(tokens)
        or not all(isinstance(r, dict) and all(_count(v) for v in r.values()) for r in ranks)
    ):
        yield '"ranks" is not a list, as long as "tokens", of objects of ranks (whole numbers from 0)'


def _texts(value: object) -> bool:
    return isinstance(value, str) or isinstance(value, list) and all(isinstance(text, str) for text in value)


def _logprob(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _shown(value: Any) -> str:
    """A JSON value as the file holds it, cut to 60 characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"
