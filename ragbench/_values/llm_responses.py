"""An LLM call's response (`Response`): its texts, the first choice's per-token log-probabilities (`TokenLogprobs`),
token counts, tool calls, and the fields a vendor's answer adds; its record (`to_dict`) and back (`from_dict`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .billed import TOKEN_COUNTS
from .json_values import JsonObject, JsonValue
from .tool_calls import ToolCall


@dataclass
class TokenLogprobs:
    """One generated token, its log-probability and the top-k alternatives at that position."""

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)
    named: dict[str, float] = field(default_factory=dict)  # Sampling.logprob_tokens at this position
    token_id: int | None = None


PROMPT_CACHE_COUNTS = TOKEN_COUNTS[2:]  # kept when not 0


@dataclass
class Response:
    texts: list[str]
    logprobs: list[TokenLogprobs] | None = None  # for the first choice
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = "stop"
    cached: bool = False
    cumulative_logprob: float | None = None  # of the first choice's tokens, when logprobs were asked
    # Per completion (aligned with `texts`), the tool calls it made; None: the request offered no tools.
    choice_tool_calls: list[tuple[ToolCall, ...]] | None = None
    # A Responses-API answer's output items (JSON text of the list, reasoning items included), which an agent
    # sends back in its next turn (`Message.items`); None from other APIs.
    items: str | None = None
    # A chat answer whose first choice's message content was a list of content parts (some OpenAI-compatible servers
    # send one where OpenAI's API sends text): the JSON text of that list as sent, which a caller reading the reply as
    # the OpenAI SDK gives it uses (the RAGAS metrics, as instructor); `texts` holds the text parts joined. None: text.
    content_parts: str | None = None
    # The first choice's generated token ids, the EOS or stop-completing token included (hf, vllm); None: the
    # engine does not see ids (openai, scripted, replay).
    token_ids: list[int] | None = None
    # Of prompt_tokens, those the vendor's prompt cache served (OpenAI's cached_tokens, Anthropic's cache reads,
    # Gemini's cachedContentTokenCount) and those written to it (Anthropic's cache writes; of them, the
    # 1-hour cache's): each priced at its own rate (ragbench._cost.prices)
    cached_prompt_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0

    @property
    def text(self) -> str:
        return self.texts[0] if self.texts else ""

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The first completion's tool calls (none when it answered in text)."""
        return self.choice_tool_calls[0] if self.choice_tool_calls else ()

    @property
    def malformed_tool_calls(self) -> int:
        """Tool calls, over every completion, whose arguments are not JSON (kept, with `ToolCall.error`)."""
        return sum(call.error is not None for calls in self.choice_tool_calls or () for call in calls)

    def to_dict(self) -> JsonObject:
        """Field by field, not `dataclasses.asdict`: with Self-RAG's top-k log-probs asdict's deep
        copy was a fifth of a CRAG Task 3 run's main-process CPU (the values are floats: a shallow
        copy of each dict is a full one)."""
        logprobs: JsonValue = (
            None
            if self.logprobs is None
            else [
                {
                    "token": t.token,
                    "logprob": t.logprob,
                    "top": dict(t.top),
                    "named": dict(t.named),
                    "token_id": t.token_id,
                }
                for t in self.logprobs
            ]
        )
        out: JsonObject = {
            "texts": list(self.texts),
            "logprobs": logprobs,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "finish_reason": self.finish_reason,
            "cumulative_logprob": self.cumulative_logprob,
        }
        if self.choice_tool_calls is not None:  # the OpenAI form, arguments as the text the model wrote
            out["tool_calls"] = [[call.to_dict() for call in calls] for calls in self.choice_tool_calls]
        if self.items is not None:
            out["items"] = self.items
        if self.content_parts is not None:
            out["content_parts"] = self.content_parts
        if self.token_ids is not None:
            out["token_ids"] = list(self.token_ids)
        out.update({name: getattr(self, name) for name in PROMPT_CACHE_COUNTS if getattr(self, name)})
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Response:
        logprobs = data.get("logprobs")
        return cls(
            texts=list(data["texts"]),
            logprobs=[TokenLogprobs(**t) for t in logprobs] if logprobs is not None else None,
            prompt_tokens=data.get("prompt_tokens", 0),
            completion_tokens=data.get("completion_tokens", 0),
            finish_reason=data.get("finish_reason", "stop"),
            cumulative_logprob=data.get("cumulative_logprob"),
            choice_tool_calls=None
            if data.get("tool_calls") is None
            else [tuple(ToolCall.from_dict(call) for call in calls) for calls in data["tool_calls"]],
            items=data.get("items"),
            content_parts=data.get("content_parts"),
            token_ids=None if data.get("token_ids") is None else list(data["token_ids"]),
            **{name: data[name] for name in PROMPT_CACHE_COUNTS if name in data},
        )
