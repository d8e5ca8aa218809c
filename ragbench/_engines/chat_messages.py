"""The turns of a chat request as every engine reads them, typed: the OpenAI form of `Request.message_dicts()`
(ragbench._values.tool_calls), which each engine writes into its own API's body or its model's chat template."""

from __future__ import annotations

from typing import TypedDict, cast

from .._types import JsonValue
from .._values.llm_calls import Request


class CalledFunction(TypedDict):
    name: str
    arguments: str  # the JSON text the model wrote


class ToolCallForm(TypedDict):
    """An assistant turn's tool call (`ToolCall.to_dict`)."""

    id: str
    type: str  # "function"
    function: CalledFunction


class _Turn(TypedDict):
    role: str  # "system", "user", "assistant" or "tool"
    content: str | None  # None: an assistant turn that only called tools


class ChatMessage(_Turn, total=False):
    """One turn (`Message.to_dict`): an assistant's tool calls, the call a tool turn answers, the output items of
    a Responses-API answer (sent back by an engine speaking that API)."""

    tool_calls: list[ToolCallForm]
    tool_call_id: str
    items: list[JsonValue]


def chat_messages(request: Request) -> list[ChatMessage]:
    """The turns of a chat request; a prompt request's prompt as one user turn."""
    if not request.is_chat:
        return [{"role": "user", "content": request.prompt}]
    return cast(list[ChatMessage], request.message_dicts())  # Message.to_dict writes this shape
