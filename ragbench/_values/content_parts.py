"""A chat turn's content as parts, text and images in order: OpenAI's content parts, as a request holds them
(`Message.parts`: each text a str, each image an `Image`) and as a record writes them (an image by its digest).

A user turn given as a list of parts that holds an image is read here; a list without one (or any other turn's list)
stays the JSON text a server's earlier reply held (`Message.content_parts`), sent back as it was. An image part is `{"type": "image", "image": X}`,
X anything `Image.of` reads (a path, bytes, a `datasets` Image value, a PIL image, an `Image`), or the OpenAI form
`{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}` with a data URL (a web URL would be
fetched by the vendor, not by ragbench: refused, its bytes would be no part of the cache key).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .images import Image

Part = str | Image  # a text part, or an image
IMAGE_LENGTH = 1600  # what an image counts as in `Request.text_length`: about the most tokens a vendor bills for one


def holds_image(content: Sequence[Any]) -> bool:
    """Whether an OpenAI-style list of content parts holds an image part: `{"type": "image", "image": X}`, or an
    `image_url` part that names a URL. A part of those types without one (an assistant's reply a server sent as
    parts, sent back as instructor does) is no image: the list stays the JSON text it was."""
    return any(_is_image(part) for part in content)


def _is_image(part: Any) -> bool:
    if not isinstance(part, Mapping):
        return False
    kind = part.get("type")
    return (kind == "image" and "image" in part) or (kind == "image_url" and _url(part) is not None)


def _url(part: Mapping[str, Any]) -> Any:
    given = part.get("image_url")
    return given.get("url") if isinstance(given, Mapping) else given


def parts_of(content: Sequence[Any]) -> tuple[Part, ...]:
    """A list of content parts as a request holds them; ValueError for a part that is no text and no image."""
    return tuple(_part(part) for part in content)


def _part(part: Any) -> Part:
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


def parts_text(parts: Iterable[Part]) -> str:
    """The text parts joined by newlines: the turn's text, as a text-only reader (a trace, a scripted rule) reads it."""
    return "\n".join(part for part in parts if isinstance(part, str))


def images_in(parts: Iterable[Part]) -> tuple[Image, ...]:
    return tuple(part for part in parts if isinstance(part, Image))


def image_record(image: Image) -> dict[str, str | int]:
    """What a request's record holds of an image it sends: its digest, media type and size, never its path (the
    same picture from two paths is one request)."""
    return {"sha256": image.digest, "media_type": image.media_type, "bytes": len(image.data)}


def part_dicts(parts: Iterable[Part]) -> list[dict[str, Any]]:
    """The parts as a record writes them: OpenAI's text parts, an image `{"type": "image", "image": image_record}`."""
    return [
        {"type": "text", "text": part} if isinstance(part, str) else {"type": "image", "image": image_record(part)}
        for part in parts
    ]


def data_url(image: Image) -> str:
    """The image as a `data:` URL (base64), as OpenAI's APIs take an image sent inline."""
    return f"data:{image.media_type};base64,{base64.b64encode(image.data).decode('ascii')}"


def user_turn(text: str, images: Sequence[Any] = ()) -> dict[str, Any]:
    """A user turn asking `text` about `images` (each anything `Image.of` reads), the images first: the order
    Anthropic's and Gemini's guides advise, and CRAG-MM's agents send."""
    if not images:
        return {"role": "user", "content": text}
    return {
        "role": "user",
        "content": [*({"type": "image", "image": Image.of(image)} for image in images), {"type": "text", "text": text}],
    }
