"""The pictures a vendor's API takes inline, and what is done with one it would refuse, before the request is sent
(directly or in a batch): a picture the API takes goes byte for byte; one it would refuse is resized to the size
the vendor's own documentation gives, or, where it documents none, the request is refused here in one line
(a RequestError: the example fails, nothing is sent). Sizes are measured as sent (the base64 text of the bytes).

- Anthropic (platform.claude.com/docs/en/build-with-claude/vision): at most 8000x8000 px a picture (2000x2000 px in
  a request of more than 20), 5 MB of base64 (the API's own refusal: "image exceeds 5 MB maximum: ... bytes >
  5242880 bytes"), 32 MB a request (standard endpoints). A picture whose long edge is over 1568 px is scaled down
  by the API itself, preserving its aspect ratio, and the docs recommend sending at most 1.15 megapixels within
  1568 px a side: a picture over a limit is resized to that, what the model would have seen of it anyway.
- OpenAI (platform.openai.com/docs/guides/images-vision, "Image input requirements"): up to 50 MB of pictures a
  request and 20 MB a picture; a `detail: high` picture is first scaled to fit a 2048x2048 square: a picture over a
  limit is resized to fit it. Only for OpenAI's own API (api.openai.com): a server of another (vLLM's) has its own.
- Gemini (ai.google.dev/gemini-api/docs/image-understanding): pictures go inline while the whole request is under
  20 MB; a larger one needs the Files API, which the gemini engine does not use, and the docs give no size the API
  scales a picture to: such a request is refused.

A resized picture keeps its orientation (EXIF applied), is a JPEG where it was one and a PNG otherwise, and is
logged once (a warning naming it, its size and the size sent); the request's cache key and record still name the
picture given (its digest), as every other engine's do.
"""

from __future__ import annotations

import functools
import io
import logging
import math
from dataclasses import dataclass, replace
from typing import Any

from ..._imports import import_extra
from ..._values.chat_turns import Message, Part
from ..._values.engine_errors import RequestError
from ..._values.images import Image
from ..._values.llm_request import Request

log = logging.getLogger(__name__)
MB = 1_000_000  # a vendor's "MB" read as the smaller unit: a limit never passed either way


@dataclass(frozen=True)
class VendorImages:
    """What one vendor's API takes of a request's pictures sent inline (bytes as sent, base64), and the size its
    documentation gives for one it would refuse (`fit_side`, at most `fit_pixels`; None: the request is refused)."""

    vendor: str
    docs: str
    image_bytes: int | None = None  # one picture, as sent
    side: int | None = None  # a picture's longest side, px
    many: int | None = None  # in a request of more pictures than this ...
    many_side: int | None = None  # ... a picture's longest side, px
    request_bytes: int | None = None  # all the request's pictures, as sent
    fit_side: int | None = None
    fit_pixels: int | None = None


ANTHROPIC_IMAGES = VendorImages(
    "anthropic",
    "platform.claude.com/docs/en/build-with-claude/vision",
    image_bytes=5 * 1024 * 1024,  # the API's refusal names 5242880 bytes
    side=8000,
    many=20,
    many_side=2000,
    request_bytes=32 * MB,
    fit_side=1568,
    fit_pixels=1_150_000,
)
OPENAI_IMAGES = VendorImages(
    "openai",
    "platform.openai.com/docs/guides/images-vision",
    image_bytes=20 * MB,
    request_bytes=50 * MB,
    fit_side=2048,
)
GEMINI_IMAGES = VendorImages("gemini", "ai.google.dev/gemini-api/docs/image-understanding", request_bytes=20 * MB)


def sent_bytes(image: Image) -> int:
    """The picture's size as an API receives it inline: its base64 text."""
    return 4 * math.ceil(len(image.data) / 3)


def sent_pictures(request: Request, rules: VendorImages) -> Request:
    """`request` with each picture `rules` say the vendor would refuse resized as its docs say; RequestError (one
    line) where that cannot make the request one the vendor takes."""
    images = list(request.sent_images)
    if not images:
        return request
    swapped = _fitted(images, rules)
    if not swapped:
        return request

    def parts(given: tuple[Part, ...]) -> tuple[Part, ...]:
        return tuple(swapped.get(part, part) if isinstance(part, Image) else part for part in given)

    turns = request.messages
    if turns is not None:
        turns = tuple(replace(t, parts=parts(t.parts)) if isinstance(t, Message) and t.parts else t for t in turns)
    return replace(request, images=tuple(swapped.get(image, image) for image in request.images), messages=turns)


def _fitted(images: list[Image], rules: VendorImages) -> dict[Image, Image]:
    """The pictures of a request to send resized, each by its resized self."""
    side = rules.many_side if rules.many is not None and len(images) > rules.many else rules.side
    out: dict[Image, Image] = {}
    for image in dict.fromkeys(images):
        why = _refused_because(image, rules, side)
        if why is not None:
            out[image] = _resized_or_refused(image, rules, side, why)
    total = sum(sent_bytes(out.get(image, image)) for image in images)
    limit = rules.request_bytes
    if limit is not None and total > limit and rules.fit_side is not None:
        # every picture at the documented size: what the API scales it to anyway
        for image in dict.fromkeys(images):
            if image not in out and _over_fit(image, rules):
                out[image] = _resized_or_refused(image, rules, side, "")
        total = sum(sent_bytes(out.get(image, image)) for image in images)
    if limit is not None and total > limit:
        at = f" even at the {rules.fit_side}-pixel size its docs give" if rules.fit_side is not None else ""
        instead = "; a larger one needs its Files API, which this engine does not use" if rules.fit_side is None else ""
        raise RequestError(
            f"{rules.vendor} engine: the request's {len(images)} pictures are {total / MB:.1f} MB as sent (base64)"
            f"{at}, over the {limit / MB:g} MB one {rules.vendor} request takes ({rules.docs}{instead}): send fewer "
            "or smaller pictures"
        )
    return out


def _refused_because(image: Image, rules: VendorImages, side: int | None) -> str | None:
    """Why the vendor would refuse `image` on its own; None where it takes it."""
    if rules.image_bytes is not None and sent_bytes(image) > rules.image_bytes:
        return f"{sent_bytes(image) / MB:.1f} MB as sent, over the {rules.image_bytes / MB:g} MB a picture may be"
    if side is not None:
        size = _size_of(image)
        if size is not None and max(size) > side:
            return f"{size[0]}x{size[1]} px, over the {side} px a side it may be"
    return None


def _over_fit(image: Image, rules: VendorImages) -> bool:
    size = _size_of(image)
    if size is None or rules.fit_side is None:
        return False
    return max(size) > rules.fit_side or (rules.fit_pixels is not None and size[0] * size[1] > rules.fit_pixels)


def _pil() -> Any:
    return import_extra("PIL.Image", "resizing a picture for a vendor's API needs Pillow: pip install pillow")


def _size_of(image: Image) -> tuple[int, int] | None:
    """(width, height) as the picture's header says; None where PIL cannot read it (the vendor judges it)."""
    pil = _pil()
    try:
        with pil.open(io.BytesIO(image.data)) as picture:
            width, height = picture.size
    except (OSError, ValueError, SyntaxError, pil.DecompressionBombError):
        return None
    return int(width), int(height)


def _resized_or_refused(image: Image, rules: VendorImages, side: int | None, why: str) -> Image:
    name = image.source or f"sha256 {image.digest[:12]}"
    if rules.fit_side is None:
        raise RequestError(f"{rules.vendor} engine: picture {name} is {why} ({rules.docs}): send a smaller one")
    target = min(rules.fit_side, side) if side is not None else rules.fit_side
    try:
        return _resized(image, target, rules.fit_pixels, rules.image_bytes, rules.vendor)
    except (OSError, ValueError, SyntaxError, _pil().DecompressionBombError) as exc:
        reason = f"{why}, and it" if why else "it"
        raise RequestError(
            f"{rules.vendor} engine: picture {name} is too large for the {rules.vendor} API ({reason} cannot be "
            f"resized: {type(exc).__name__}: {exc}); send a smaller one"
        ) from None


@functools.lru_cache(maxsize=16)  # a page sent in many requests is resized once
def _resized(image: Image, side: int, pixels: int | None, most: int | None, vendor: str) -> Image:
    """`image` scaled (aspect ratio kept) to at most `side` px a side and `pixels` pixels, then further where its
    encoding is still over `most` bytes as sent."""
    pil = _pil()
    from PIL import ImageOps

    with pil.open(io.BytesIO(image.data)) as opened:
        opened.seek(0)  # an animated GIF: its first frame
        picture = ImageOps.exif_transpose(opened)
        width, height = picture.size
        scale = min(1.0, side / max(width, height), math.sqrt(pixels / (width * height)) if pixels else 1.0)
        jpeg = image.media_type == "image/jpeg"
        if jpeg and picture.mode not in ("L", "RGB"):
            picture = picture.convert("RGB")
        elif not jpeg and picture.mode not in ("1", "L", "LA", "P", "RGB", "RGBA"):
            picture = picture.convert("RGBA" if "A" in picture.getbands() else "RGB")
        for _ in range(12):
            size = (max(1, math.floor(width * scale)), max(1, math.floor(height * scale)))
            buffer = io.BytesIO()
            small = picture.resize(size, pil.Resampling.LANCZOS, reducing_gap=3.0)
            small.save(buffer, format="JPEG", quality=90) if jpeg else small.save(buffer, format="PNG")
            data = buffer.getvalue()
            if most is None or 4 * math.ceil(len(data) / 3) <= most:
                break
            scale *= 0.8
    made = Image(data=data, media_type="image/jpeg" if jpeg else "image/png", source=image.source)
    log.warning(
        "%s: picture %s (%dx%d px, %.1f MB as sent) resized to %dx%d px (%.1f MB) before it is sent: the size the "
        "vendor's docs give for one over its limits",
        vendor, image.source or f"sha256 {image.digest[:12]}", width, height, sent_bytes(image) / MB,
        size[0], size[1], sent_bytes(made) / MB,
    )  # fmt: skip
    return made
