"""The turns of a chat request as every engine reads them, typed: the OpenAI form of `Request.message_dicts()`
(ragbench._values.tool_calls), which each engine writes into its own API's body or its model's chat template.
A turn that sends images keeps its text in `content` and adds `parts`, texts and `Image`s in order, which an
engine writes in its own form (`content_of`); a prompt request's images come before its prompt in its one turn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict, cast

from .._types import JsonValue
from .._values.content_parts import Part, data_url, parts_text
from .._values.images import Image
from .._values.llm_calls import Request
from .._values.tool_calls import Message


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
    parts: list[Part]  # the turn's texts and images in order, where it sends images


def chat_messages(request: Request) -> list[ChatMessage]:
    """The turns of a chat request; a prompt request's prompt (after its images) as one user turn."""
    if not request.is_chat:
        asked: ChatMessage = {"role": "user", "content": request.prompt}
        if request.images:
            asked["parts"] = [*request.images, request.prompt or ""]
        return [asked]
    out = cast(list[ChatMessage], request.message_dicts())  # Message.to_dict writes this shape
    for message, turn in zip(out, request.messages or ()):
        if isinstance(turn, Message) and turn.parts:  # the record's image parts (digests) replaced by the images
            message["content"], message["parts"] = parts_text(turn.parts), list(turn.parts)
    return out


def content_of(turn: ChatMessage, text: Callable[[str], Any], image: Callable[[Image], Any]) -> Any:
    """The turn's content: its text as it is, or, where it sends images, its parts each in an engine's own form."""
    if "parts" not in turn:
        return turn["content"]
    return [text(part) if isinstance(part, str) else image(part) for part in turn["parts"]]


def openai_message(turn: ChatMessage) -> dict[str, Any]:
    """A turn as OpenAI's chat API (and vLLM's server) takes it: its images as `image_url` parts with a base64 `data:`
    URL; the output items of a Responses-API answer left out."""
    out: dict[str, Any] = {key: value for key, value in turn.items() if key not in ("items", "parts")}
    out["content"] = content_of(
        turn, text_part, lambda image: {"type": "image_url", "image_url": {"url": data_url(image)}}
    )
    return out


def text_part(text: str) -> dict[str, str]:
    """A text as OpenAI's (and the Messages API's, and chat templates') typed text part."""
    return {"type": "text", "text": text}
