"""A chat turn, typed from a task's prompt to an engine's request: `Message`, its content a text or parts (`Part`:
each text a str, each image an `Image`, in order), an assistant's tool calls or a tool's result
(ragbench._values.tool_calls). A task builds its turns with `chat_turn` / `user_turn` (or `Message(role, text)`);
`Request.chat` takes them as they are, and a plain `{"role", "content"}` dict (a third party's prompt) is read into
one here, once (`turn_of`). What a record holds of a turn (`Message.to_dict`: an image by its digest) is made for
records only; an engine writes the turn in its own API's form (ragbench._engines.chat_messages).

A dict's content that is a list of parts holding an image (a user's turn only) is read into `parts`: an image part
`{"type": "image", "image": X}`, X anything `Image.of` reads, or the OpenAI form `{"type": "image_url", "image_url":
{"url": "data:image/png;base64,..."}}` with a data URL (a web URL would be fetched by the vendor, not by ragbench:
refused, its bytes would be no part of the cache key). A list without an image (or any other role's list) stays the
JSON text a server's earlier reply held (`Message.content_parts`), sent back as it was.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .images import Image
from .json_values import JsonObject
from .tool_calls import ToolCall

Part = str | Image  # a text part, or an image
IMAGE_LENGTH = 1600  # what an image counts as in `Request.text_length`: about the most tokens a vendor bills for one


@dataclass(frozen=True)
class Message:
    """One chat turn: a role and its text (`Message("system", "Be brief.")`), or its parts, texts and images in order
    (`chat_turn`: `content` their texts joined); an assistant turn with tool calls (content may be None, as servers
    send it), or a `tool` turn carrying a call's result with its `tool_call_id`. An assistant turn a Responses-API
    server wrote may hold its output `items` (JSON text of the list, reasoning items included): sent back as they are
    by an engine speaking that API, left out by the others. A turn whose content is a list of content parts without
    an image (an earlier reply of a server that answered so, sent back as instructor sends it) holds their JSON text
    in `content_parts`, sent as that list in place of `content`.

    What the later steps read of a turn is computed once, when it is made, as plain fields: a turn of parts has
    their texts as its `content`, `images` are its images in order, and `pair` is its (role, content) where it is no
    more than that (the form a request holds it in). A request and an engine read them without calling back here."""

    role: str
    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    items: str | None = None
    content_parts: str | None = None
    # out of the repr, so that a turn without images keeps its cache key; `Request.cache_key` adds them
    parts: tuple[Part, ...] = field(default=(), repr=False)
    images: tuple[Image, ...] = field(init=False, repr=False, compare=False)  # the images it sends, in order
    pair: tuple[str, str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.parts:
            object.__setattr__(self, "content", parts_text(self.parts))
        object.__setattr__(self, "images", tuple(part for part in self.parts if isinstance(part, Image)))
        more = self.tool_calls or self.parts or (self.tool_call_id, self.items, self.content_parts) != (None,) * 3
        plain = self.content is not None and not more
        object.__setattr__(self, "pair", (self.role, self.content) if plain else None)

    def to_dict(self) -> JsonObject:
        """The turn as a record writes it, OpenAI's form: the content its text (where it holds a server's list of
        parts, that list; where it sends images, its parts, an image as `{"type": "image", "image": {"sha256",
        "media_type", "bytes"}}`: `Image.record`), then its tool calls, the call it answers and its output items."""
        out = turn_form(self.role, self.content, self.content_parts, self.tool_calls, self.tool_call_id, self.items)
        if self.parts:
            out["content"] = [
                {"type": "text", "text": part} if isinstance(part, str) else {"type": "image", "image": part.record()}
                for part in self.parts
            ]
        return out


def turn_form(
    role: str,
    content: str | None,
    content_parts: str | None,
    tool_calls: tuple[ToolCall, ...],
    tool_call_id: str | None,
    items: str | None,
) -> JsonObject:
    """OpenAI's form of a turn's fields but its parts (which a record writes as image records and an engine sends):
    the content its text (where it holds a server's list of parts, that list), then its tool calls, the call it
    answers and its output items. Given the fields, not the turn: an engine writes a turn's body with no call back
    into the turn's images (`Message.to_dict`, ragbench._engines.chat_messages)."""
    out: JsonObject = {"role": role, "content": content if content_parts is None else json.loads(content_parts)}
    if tool_calls:
        out["tool_calls"] = [call.to_dict() for call in tool_calls]
    if tool_call_id is not None:
        out["tool_call_id"] = tool_call_id
    if items is not None:
        out["items"] = json.loads(items)
    return out


Turn = tuple[str, str] | Message  # a request's turn: a plain (role, content) pair, or a `Message` that is more


def chat_turn(parts: Sequence[Part], role: str = "user") -> Message:
    """A turn of `parts`, texts and images in order (each image an `Image`: `Image.of` reads one)."""
    given = tuple(parts)
    if not all(isinstance(part, (str, Image)) for part in given):
        raise TypeError(f"a turn's parts are texts and Images, not {[type(p).__name__ for p in given]}")
    return Message(role=role, content=None, parts=given)  # its content: the parts' texts (`Message`)


def user_turn(text: str, images: Sequence[Any] = ()) -> Message:
    """A user turn asking `text` about `images` (each anything `Image.of` reads), the images first: the order
    Anthropic's and Gemini's guides advise, and CRAG-MM's agents send."""
    if not images:
        return Message("user", text)
    return chat_turn([*map(Image.of, images), text])


def parts_text(parts: Iterable[Part]) -> str:
    """The text parts joined by newlines: the turn's text, as a text-only reader (a trace, a scripted rule) reads it."""
    return "\n".join(part for part in parts if isinstance(part, str))


def turn_of(message: Message | Mapping[str, Any]) -> Turn:
    """A turn as a request holds it: a (role, content) pair where it is no more than that, else a `Message`; a dict
    (OpenAI's form, tool calls and results included) read into one."""
    if isinstance(message, Message):
        return message.pair or message
    calls = message.get("tool_calls") or ()
    items = message.get("items")
    content = message.get("content")
    if not calls and items is None and message.get("tool_call_id") is None and isinstance(content, str):
        return message["role"], content
    listed = isinstance(content, list)
    # only a user sends images: any other turn's parts (an assistant's reply sent back) stay their JSON text
    images = isinstance(content, list) and message.get("role") == "user" and any(map(_is_image, content))
    held = tuple(map(_part, content)) if isinstance(content, list) and images else ()
    return Message(
        role=message["role"],
        content=parts_text(held) if images else None if listed else content,
        content_parts=json.dumps(content, ensure_ascii=False) if listed and not images else None,
        parts=held,
        tool_calls=tuple(c if isinstance(c, ToolCall) else ToolCall.from_dict(c) for c in calls),
        tool_call_id=message.get("tool_call_id"),
        items=items if items is None or isinstance(items, str) else json.dumps(items, ensure_ascii=False),
    )


def turn_text(turn: Turn) -> str:
    """The turn's text (a tool turn's result; an assistant's content, "" when it only called tools; content parts'
    JSON text)."""
    return (turn.content or turn.content_parts or "") if isinstance(turn, Message) else turn[1]


def turn_record(turn: Turn) -> JsonObject:
    """The turn as a record writes it (`Message.to_dict`)."""
    return turn.to_dict() if isinstance(turn, Message) else {"role": turn[0], "content": turn[1]}


def _is_image(part: Any) -> bool:
    """`{"type": "image", "image": X}`, or an `image_url` part that names a URL. A part of those types without one (an
    assistant's reply a server sent as parts, sent back as instructor does) is no image."""
    if not isinstance(part, Mapping):
        return False
    kind = part.get("type")
    return (kind == "image" and "image" in part) or (kind == "image_url" and _url(part) is not None)


def _url(part: Mapping[str, Any]) -> Any:
    given = part.get("image_url")
    return given.get("url") if isinstance(given, Mapping) else given


def _part(part: Any) -> Part:
    """A dict's content part as a turn holds it; ValueError for a part that is no text and no image."""
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping):
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            return str(part["text"])
        if kind == "image" and "image" in part:
            return Image.of(part["image"])
        if kind == "image_url" and _url(part) is not None:
            return _from_data_url(str(_url(part)))
    raise ValueError(
        f"a content part is {{'type': 'text', 'text': ...}} or {{'type': 'image', 'image': ...}}, not {part!r:.80}"
    )


def _from_data_url(url: str) -> Image:
    head, comma, data = url.partition(",")
    if not (head.startswith("data:") and head.endswith(";base64") and comma):
        raise ValueError(f"an image_url part needs a data URL (data:image/...;base64,...), not {url[:60]!r}")
    try:
        return Image.of(base64.b64decode(data, validate=True), source="data URL")
    except binascii.Error as exc:
        raise ValueError(f"an image_url part's data URL is not base64: {exc}") from None
