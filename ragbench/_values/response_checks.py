"""Whether an engine's answer answers its request: checked where every engine's answer arrives (the call pool,
ragbench._scheduler) and where the response cache answers, before anything uses, caches or counts it.

What a server or an engine returns is outside ragbench's hands: a negative or absurd token count summed into
run.json's cost, a text that is not a string, a finish reason no one knows, log-probabilities missing although
the request asked for them (a server that ignores `logprobs`) or holding NaN. Such an answer is the engine's
error for that call, saying what was wrong: counted, never cached and never summed, so that after the server
is fixed `--resume` asks again instead of serving the incomplete answer forever.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from .billed import TOKEN_COUNTS, Billed
from .json_values import JsonObject
from .llm_request import Request
from .llm_responses import Response, TokenLogprobs
from .tool_calls import ToolCall

# "content_filter": the provider withheld the text (OpenAI); "tool_calls": the model called tools, an answer
# only to a request that offered some ("function_call", the legacy form, is none: ragbench sends `tools`);
# "pause_turn": the API's servers paused a long turn of their own tool calls (Anthropic's, calling a remote MCP
# server), an answer only to a request that offered one.
FINISH_REASONS = ("stop", "length", "content_filter", "tool_calls", "pause_turn")
MOST_TOKENS = 10**9  # no call reads or writes a billion tokens: a count past it is a server's bug


def response_problem(response: Any, request: Request) -> str | None:
    """What makes `response` no answer to `request` (the first found), or None."""
    return next(_problems(response, request), None)


def billed_tokens(response: Any) -> Billed | None:
    """The tokens a refused answer was billed for, where its counts are readable (each a token count, its prompt
    cache's within its prompt's); None where they are not, or none was billed."""
    try:
        if not isinstance(response, Response) or not all(
            is_token_count(getattr(response, name)) for name in TOKEN_COUNTS
        ):
            return None
        if next(_cache_problems(response), None) is not None or not (
            response.prompt_tokens or response.completion_tokens
        ):
            return None
    except Exception:  # an object of the engine's own whose fields raise when read
        return None
    return Billed().add(response)


def asks_logprobs(request: Request) -> bool:
    return request.sampling.logprobs is not None or bool(request.sampling.logprob_tokens)


def _problems(response: Any, request: Request) -> Iterator[str]:
    if not isinstance(response, Response):
        yield f"{_kind(response)}, not a Response"
        return
    texts = response.texts
    if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
        yield f"texts {_shown(texts)} are not a list of strings"
    elif len(texts) != request.sampling.n:
        yield f"{len(texts)} texts for a request of n={request.sampling.n}"
    for name in TOKEN_COUNTS:
        value = getattr(response, name)
        if not is_token_count(value):
            yield f"{name} {_shown(value)} is not a whole number from 0 to {MOST_TOKENS:,}"
    if all(is_token_count(getattr(response, name)) for name in TOKEN_COUNTS):
        yield from _cache_problems(response)
    if response.finish_reason not in FINISH_REASONS:
        yield f"finish_reason {_shown(response.finish_reason)} is none of {', '.join(FINISH_REASONS)}"
    elif response.finish_reason == "pause_turn" and not any(tool.remote_mcp for tool in request.tools):
        yield "finish_reason 'pause_turn' to a request that offered no remote MCP server"
    yield from _tool_call_problems(response, request)
    yield from _item_problems(response.items)
    yield from _content_part_problems(response.content_parts)
    if response.cumulative_logprob is not None and not _logprob(response.cumulative_logprob):
        yield f"cumulative_logprob {_shown(response.cumulative_logprob)} is not a log-probability"
    if response.logprobs is None:
        if asks_logprobs(request):
            yield "no log-probabilities, though the request asked for them"
    elif not isinstance(response.logprobs, list):
        yield f"logprobs {_shown(response.logprobs)} are not a list"
    else:
        bad = next((n for n, position in enumerate(response.logprobs) if not _well_formed(position)), None)
        if bad is not None:
            yield f"logprobs[{bad}]: {next(_position_problems(response.logprobs[bad]))}"


def _cache_problems(response: Response) -> Iterator[str]:
    """The prompt cache's counts are parts of the prompt's: more would price a call below nothing."""
    cached, written = response.cached_prompt_tokens, response.cache_write_tokens
    if cached + written > response.prompt_tokens:
        yield (
            f"cached_prompt_tokens {cached:,} and cache_write_tokens {written:,} are more than the prompt_tokens "
            f"{response.prompt_tokens:,} they are part of"
        )
    elif response.cache_write_1h_tokens > written:
        yield f"cache_write_1h_tokens {response.cache_write_1h_tokens:,} are more than cache_write_tokens {written:,}"


def _tool_call_problems(response: Response, request: Request) -> Iterator[str]:
    """Tool calls only in answer to a request that offered tools, one tuple of well-formed calls per completion.
    A call whose arguments are not JSON is well formed: the model wrote them, and the call is kept and counted."""
    calls = response.choice_tool_calls
    if not request.tools:
        if calls is not None:
            yield "tool calls, though the request offered no tools"
        if response.finish_reason == "tool_calls":
            yield 'finish_reason "tool_calls", though the request offered no tools'
        return
    if calls is None:
        return
    if not isinstance(calls, list) or len(calls) != len(response.texts) or not all(isinstance(c, tuple) for c in calls):
        yield f"tool_calls {_shown(calls)} are not one tuple of calls per completion"
        return
    for n, call in ((n, call) for n, choice in enumerate(calls) for call in choice):
        if not isinstance(call, ToolCall):
            yield f"tool_calls[{n}]: {_kind(call)}, not a tool call"
        elif not isinstance(call.id, str) or not isinstance(call.name, str) or not call.name:
            yield f"tool_calls[{n}]: id {_shown(call.id)} or name {_shown(call.name)} is not a string"
        elif not isinstance(call.raw_arguments, str):
            yield f"tool_calls[{n}]: arguments {_shown(call.raw_arguments)} are not a text"


def _item_problems(items: Any) -> Iterator[str]:
    """An answer's output items: the JSON text of a list of objects, each a Responses-API item (with a `type`) or
    a Gemini part (with one of its fields) (an agent sends them back as they are)."""
    if not _json_list_of(items, lambda item: isinstance(item, dict) and _typed_or_part(item)):
        yield f"output items {_shown(items)} are not the JSON text of a list of typed objects or Gemini parts"


def _content_part_problems(parts: Any) -> Iterator[str]:
    """A chat answer's content parts: the JSON text of a list of objects, each with a string `type`."""
    if not _json_list_of(parts, lambda part: isinstance(part, dict) and isinstance(part.get("type"), str)):
        yield f"content parts {_shown(parts)} are not the JSON text of a list of typed objects"


def _json_list_of(text: Any, each: Callable[[Any], bool]) -> bool:
    """Whether `text` is None (nothing given) or the JSON text of a list whose every entry passes `each`."""
    if text is None:
        return True
    try:
        parsed = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        parsed = None
    return isinstance(parsed, list) and all(each(entry) for entry in parsed)


# the fields of a Gemini API part as google-genai dumps one (snake_case)
GEMINI_PART_FIELDS = frozenset(
    {"text", "thought", "thought_signature", "function_call", "function_response", "inline_data", "file_data"}
    | {"executable_code", "code_execution_result"}
)


def _typed_or_part(item: JsonObject) -> bool:
    return isinstance(item.get("type"), str) or not GEMINI_PART_FIELDS.isdisjoint(item)


def is_token_count(value: Any) -> bool:
    return _integer(value) and 0 <= value <= MOST_TOKENS


def _well_formed(position: Any) -> bool:
    """`_position_problems` finds none (the hot path: every position of every answer with log-probs)."""
    return (
        isinstance(position, TokenLogprobs)
        and isinstance(position.token, str)
        and _logprob(position.logprob)
        and _logprobs_of_tokens(position.top)
        and _logprobs_of_tokens(position.named)
        and (position.token_id is None or (_integer(position.token_id) and position.token_id >= 0))
    )


def _logprobs_of_tokens(entries: Any) -> bool:
    return isinstance(entries, dict) and all(
        isinstance(token, str) and _logprob(value) for token, value in entries.items()
    )


def _position_problems(position: Any) -> Iterator[str]:
    if not isinstance(position, TokenLogprobs):
        yield f"{_kind(position)}, not a token's log-probabilities"
        return
    if not isinstance(position.token, str):
        yield f"token {_shown(position.token)} is not a string"
    if not _logprob(position.logprob):
        yield f"logprob {_shown(position.logprob)} is not a log-probability"
    for name in ("top", "named"):
        if not _logprobs_of_tokens(getattr(position, name)):
            yield f"{name} {_shown(getattr(position, name))} is not an object of tokens' log-probabilities"
    if not _well_formed(position):
        yield f"token_id {_shown(position.token_id)} is not a token id"


def _logprob(value: Any) -> bool:
    """A log-probability: a number up to 0 (-inf: probability 0); not NaN (no comparison holds for it)."""
    if type(value) is float:  # the hot path: every log-prob of every answer
        return value <= 0
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    return "null" if value is None else f"a {type(value).__name__}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
