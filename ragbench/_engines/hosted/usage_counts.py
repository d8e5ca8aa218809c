"""A hosted API's `usage` read as token counts, every count the answer reports held to one check.

Each count must be a whole number from 0 to MOST_TOKENS (a bool is no number): a sub-count that is not
(Anthropic's `cache_read_input_tokens: -10` beside `input_tokens: 10`, Gemini's `thoughtsTokenCount: -5`) would
otherwise cancel another in a sum that passes every later check and price the call at nothing. Such a usage, or
one that is no object, makes the answer unreadable: `read_usage` raises ValueError, which the engines retry
as they retry any unreadable 2xx body, and which fails the call, counted, when it persists. A count the server
leaves out (or sends as null) is 0.

The vendors' SDKs read a count leniently where they validate (pydantic's lax mode: `true` as 1, 2.0 as 2, "3"
as 3; openai's and anthropic's where the usage holds every field they require, google-genai's always), so the
usage is held to the check as the server sent it too (`usage_as_sent`, on the body's JSON text).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import orjson
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from ..._values.billed import TokenCounts
from ..._values.response_checks import MOST_TOKENS, is_token_count

# the counts of each API's usage ("a.b": field b of the object in field a), what they are read into
OPENAI = (  # chat completions and completions
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "prompt_tokens_details.cached_tokens",
    "completion_tokens_details.reasoning_tokens",
)
OPENAI_RESPONSES = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "input_tokens_details.cached_tokens",
    "output_tokens_details.reasoning_tokens",
)
ANTHROPIC = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "cache_creation.ephemeral_1h_input_tokens",  # of the cache writes, the 1-hour cache's (the rest: 5 minutes)
)
GEMINI = (
    "prompt_token_count",
    "candidates_token_count",
    "thoughts_token_count",
    "cached_content_token_count",
    "tool_use_prompt_token_count",
    "total_token_count",
)


def read_usage(usage: Any, counts: Sequence[str]) -> dict[str, int]:
    """Each of `counts` in `usage` (an SDK's object or a JSON object; None: the server reported none), 0 where
    absent; ValueError naming the first that is no token count, or a usage that is no object."""
    out = {}
    for path in counts:
        value, where = usage, "usage"
        for name in path.split("."):
            if value is None:
                break
            if not isinstance(value, (BaseModel, dict)):
                raise ValueError(f"{where} {_shown(value)} is not an object")
            # a JSON object as sent names Gemini's counts in camelCase
            value = (
                value.get(name, value.get(to_camel(name))) if isinstance(value, dict) else getattr(value, name, None)
            )
            where += f".{name}"
        if value is not None and not is_token_count(value):
            raise ValueError(f"{where} {_shown(value)} is not a whole number from 0 to {MOST_TOKENS:,}")
        out[path] = 0 if value is None else value
    return out


def _anthropic_tokens(usage: dict[str, int]) -> TokenCounts:
    written, read = usage["cache_creation_input_tokens"], usage["cache_read_input_tokens"]
    return {
        "prompt_tokens": usage["input_tokens"] + written + read,  # Anthropic's input_tokens are the uncached ones
        "completion_tokens": usage["output_tokens"],
        "cached_prompt_tokens": read,
        "cache_write_tokens": written,
        "cache_write_1h_tokens": usage["cache_creation.ephemeral_1h_input_tokens"],
    }


# each API's counts as a Response's token counts
_TOKENS: dict[tuple[str, ...], Callable[[dict[str, int]], TokenCounts]] = {
    OPENAI: lambda usage: {
        "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"],
        "cached_prompt_tokens": usage["prompt_tokens_details.cached_tokens"],
    },
    OPENAI_RESPONSES: lambda usage: {
        "prompt_tokens": usage["input_tokens"],
        "completion_tokens": usage["output_tokens"],
        "cached_prompt_tokens": usage["input_tokens_details.cached_tokens"],
    },
    ANTHROPIC: _anthropic_tokens,
    GEMINI: lambda usage: {
        "prompt_tokens": usage["prompt_token_count"],
        "completion_tokens": usage["candidates_token_count"] + usage["thoughts_token_count"],  # thoughts are billed
        "cached_prompt_tokens": usage["cached_content_token_count"],
    },
}


def usage_tokens(usage: Any, counts: Sequence[str]) -> TokenCounts:
    """`read_usage` of an answer's usage as the token counts of a Response (ValueError: unreadable)."""
    return _TOKENS[tuple(counts)](read_usage(usage, counts))


def usage_as_sent(body: bytes | str, key: str, counts: Sequence[str]) -> TokenCounts | None:
    """`usage_tokens` of the `key` field of a JSON answer body as the server sent it (ValueError: unreadable;
    what an answer ragbench refuses was billed). A body that is no JSON object is left to the SDK, which finds
    it no answer (None). Every answer's body is read here
    after the SDK has read it: orjson reads it about twice as fast as json (0.75 MB: 8.0 vs 14.4 ms), and what it refuses (integers past 64 bits,
    NaN, nesting past 1,024) json reads instead."""
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        try:
            answer = json.loads(body)
        except (ValueError, RecursionError):
            return None
    return usage_tokens(answer.get(key), counts) if isinstance(answer, dict) else None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
