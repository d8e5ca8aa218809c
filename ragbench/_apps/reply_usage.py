"""The model call an application's reply reports (`ReplyUsage`: its model and token counts, as an OpenAI-compatible
service's `usage` gives them), and when it is priced (`priced_steps`).

A reply's usage is the whole application's usage for the example (all its model calls, summed by the service),
while its spans are its calls one by one: the two tell the same calls twice. So the spans win: where a span of the
example read as a model call carries tokens, the reply's usage is recorded and not priced; otherwise it is one
model call of the reply's model (a step `reply usage`, role `app:MODEL`), priced by the price table as a span's
call is (ragbench._cost.prices), an unknown model unpriced, never $0.

Every count is held to the engines' check (ragbench._engines.hosted.usage_counts: a whole number from 0 to a
billion, a bool no number), and more strictly: the prompt and completion counts must both be there (a usage that
leaves one out, or sends it null, cannot be priced: 0 would be a wrong cost), and the prompt cache's counts are
parts of the prompt's. A usage that fails is a ValueError of one line; one that is null or absent is no usage.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._engines.hosted.usage_counts import ANTHROPIC, OPENAI, OPENAI_RESPONSES, usage_tokens
from .._types import Step
from .._values.billed import TOKEN_COUNTS
from .._values.json_values import JsonObject
from .conventions import APP_ROLE

REPLY_USAGE = "reply usage"  # the name of the step a reply's usage is priced as
# each shape a usage is read in: the keys that tell it (any of them there), the counts it must hold
SHAPES = (
    (("cache_creation_input_tokens", "cache_read_input_tokens"), ANTHROPIC, ("input_tokens", "output_tokens")),
    (("prompt_tokens", "completion_tokens"), OPENAI, ("prompt_tokens", "completion_tokens")),
    (("input_tokens", "output_tokens"), OPENAI_RESPONSES, ("input_tokens", "output_tokens")),
)


@dataclass(frozen=True)
class ReplyUsage:
    """The tokens an application's reply reports it used (all its model calls for the example) and the model that
    used them."""

    model: str
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0

    def to_dict(self) -> JsonObject:
        counts = {count: getattr(self, count) for count in TOKEN_COUNTS}
        return {"model": self.model, **{count: n for count, n in counts.items() if n or count in TOKEN_COUNTS[:2]}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReplyUsage:
        return cls(str(data["model"]), **{count: int(data.get(count) or 0) for count in TOKEN_COUNTS})

    def step(self, parent: str | None) -> Step:
        """The usage as one model call of the trace (under the application's call, `parent`)."""
        step = Step(
            kind="llm",
            name=REPLY_USAGE,
            request={"model": self.model},
            response={},
            role=f"{APP_ROLE}{self.model}",
        )
        for count in TOKEN_COUNTS:
            setattr(step, count, getattr(self, count))
        step.group = []
        step.span = {"id": None, "parent": parent, "kind": "llm"}
        return step


def reply_usage(usage: Any, model: str, where: str = "usage") -> ReplyUsage | None:
    """`usage` (a JSON value a reply holds; None: none reported) read as the tokens of `model` (see the module's
    docstring); ValueError of one line, naming `where` it was, if it cannot be priced right."""
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise ValueError(f"{where} is {_shown(usage)}, not an object of token counts")
    shape = next(((counts, needed) for keys, counts, needed in SHAPES if any(key in usage for key in keys)), None)
    if shape is None:
        raise ValueError(
            f"{where} holds none of prompt_tokens, completion_tokens, input_tokens, output_tokens: "
            f"its calls cannot be priced ({_shown(usage)})"
        )
    counts, needed = shape
    missing = [key for key in needed if usage.get(key) is None]
    if missing:
        raise ValueError(f"{where} has no {missing[0]} (a count left out cannot be priced): {_shown(usage)}")
    try:
        tokens = usage_tokens(usage, counts)
    except ValueError as exc:  # its line begins with "usage"
        raise ValueError(where + str(exc).removeprefix("usage")) from None
    found = ReplyUsage(
        model,
        tokens["prompt_tokens"],
        tokens["completion_tokens"],
        tokens.get("cached_prompt_tokens", 0),
        tokens.get("cache_write_tokens", 0),
        tokens.get("cache_write_1h_tokens", 0),
    )
    read, written = found.cached_prompt_tokens, found.cache_write_tokens
    if read + written > found.prompt_tokens or found.cache_write_1h_tokens > written:
        raise ValueError(
            f"{where}'s prompt cache counts ({read:,} read, {written:,} written) are more than the "
            f"{found.prompt_tokens:,} prompt tokens they are part of: {_shown(usage)}"
        )
    return found


def priced_steps(steps: Iterable[Step], usage: ReplyUsage | None, parent: str | None) -> list[Step]:
    """The example's steps from its spans, then its reply's usage as a model call where no span's model call
    carries tokens (see the module's docstring)."""
    out = list(steps)
    if usage is not None and not any(step.kind == "llm" and _tokens(step) for step in out):
        out.append(usage.step(parent))
    return out


def _tokens(step: Step) -> int:
    return step.prompt_tokens + step.completion_tokens + step.cached_prompt_tokens + step.cache_write_tokens


def _shown(value: Any) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else text[:79] + "…"
