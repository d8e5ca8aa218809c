"""The turns of a chat request as every engine reads them, and the helpers that write a turn's parts in a vendor's
form: the edge where a typed turn (ragbench._values.chat_turns) becomes a request body, each image once.

`chat_messages(request)` gives OpenAI's form of each turn (read from the turn's fields: never the record's, whose
images are digests), and, where the turn sends images, `parts`: its texts and `Image`s in order, which an engine
writes in its own API's form with `content_of` and one of the part writers below (`openai_image_part`,
`responses_image_part`, `anthropic_image_part`, `gemini_image_part`; `text_part`). A prompt request's images come
before its prompt in its one turn. A third party's engine imports these from `ragbench.api.engines`."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any, TypedDict, cast

from .._values.chat_turns import Message, Part, Turn, turn_form
from .._values.images import Image
from .._values.json_values import JsonObject, JsonValue
from .._values.llm_request import Request


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
    """One turn (`chat_messages`): an assistant's tool calls, the call a tool turn answers, the output items of
    a Responses-API answer (sent back by an engine speaking that API), the parts of a turn that sends images."""

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
    return [_sent(turn) for turn in request.messages or ()]


def _sent(turn: Turn) -> ChatMessage:
    """OpenAI's form of the turn, read from its fields (never the record's, whose images are digests): its text (a
    server's list of parts where it holds one), its tool calls, the call it answers, its output items, its parts."""
    if not isinstance(turn, Message):
        return {"role": turn[0], "content": turn[1]}
    fields = turn_form(turn.role, turn.content, turn.content_parts, turn.tool_calls, turn.tool_call_id, turn.items)
    out = cast(ChatMessage, fields)  # turn_form writes this shape
    if turn.parts:
        out["parts"] = list(turn.parts)
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
    out["content"] = content_of(turn, text_part, openai_image_part)
    return out


def text_part(text: str) -> dict[str, str]:
    """A text as OpenAI's (and the Messages API's, and chat templates') typed text part."""
    return {"type": "text", "text": text}


def data_url(image: Image) -> str:
    """The image as a `data:` URL (base64), as OpenAI's APIs take an image sent inline."""
    return f"data:{image.media_type};base64,{base64.b64encode(image.data).decode('ascii')}"


def openai_image_part(image: Image) -> JsonObject:
    """An image as OpenAI's chat API (and vLLM's server) takes one inline: an `image_url` part with a data URL."""
    return {"type": "image_url", "image_url": {"url": data_url(image)}}


def responses_image_part(image: Image) -> JsonObject:
    """An image as OpenAI's Responses API takes one inline: an `input_image` with a data URL."""
    return {"type": "input_image", "image_url": data_url(image)}


def anthropic_image_part(image: Image) -> JsonObject:
    """An image as Anthropic's Messages API takes one inline: a base64 source with its media type."""
    data = base64.b64encode(image.data).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": data}}


def gemini_image_part(image: Image) -> dict[str, dict[str, str | bytes]]:
    """An image as a Gemini part sent inline (the SDK's `Part.from_bytes`: a Blob of the bytes and their type)."""
    return {"inline_data": {"mime_type": image.media_type, "data": image.data}}
