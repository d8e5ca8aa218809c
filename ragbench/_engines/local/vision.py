"""Requests with images to a model run locally (hf, vllm): an image-text-to-text model, its processor's chat
template and its images as PIL images.

A chat request is rendered with the processor's chat template, each turn's content as typed parts (an image part
`{"type": "image"}`, the template writing the model's image placeholder there), and the images go to the processor
(hf) or to vLLM's `multi_modal_data` (vllm) in the order the turns hold them. A prompt request with images is sent as
written: its text must hold the model's placeholders itself. Whether a model takes images is read from its config
on disk (a `vision_config`), without its weights.
"""

from __future__ import annotations

from typing import Any

from ..._errors import ConfigError
from ..._values.engine_errors import RequestError
from ..._values.images import Image
from ..._values.llm_request import Request
from ..chat_messages import ChatMessage, chat_messages, content_of, text_part
from .embedded import is_embedded

# What a run that sends images can use instead: no image-text model ships with ragbench (the embedded SmolLM2 and
# MiniLM are text models), so one is a folder on disk (fetched once from the hub), a vendor's, or none at all
INSTEAD = (
    "no image-text model ships with ragbench to run offline: pass --model hf:DIR (or vllm:DIR), DIR an "
    "image-text-to-text checkpoint on disk (e.g. `hf download HuggingFaceTB/SmolVLM-256M-Instruct --local-dir DIR`, "
    "once, with network), or a vendor's model with its key (openai:gpt-4o-mini, anthropic:claude-haiku-4-5, "
    "gemini:gemini-2.5-flash); --model scripted:echo runs the task offline with no model (echoed answers: a dry run)"
)


def takes_images(config: Any) -> bool:
    """Whether a transformers config is an image-text model's: one with a vision tower's config."""
    return getattr(config, "vision_config", None) is not None


def images_problem(model: str, cache_dir: str | None = None) -> str | None:
    """Why `model` takes no images, read from its config on disk; None where it does or its config cannot be read
    before the engine loads (the engine then refuses each request with images)."""
    if is_embedded(model) or model.endswith(".gguf"):
        return f"{model} takes no images (a text model); {INSTEAD}"
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(model, local_files_only=True, cache_dir=cache_dir)
    except Exception:  # not on disk, or not a folder transformers reads: left to the engine's load
        return None
    if takes_images(config):
        return None
    return f"{model} takes no images (its config has no vision_config: a text model); {INSTEAD}"


def pil_images(images: tuple[Image, ...]) -> list[Any]:
    """The images as RGB PIL images, what processors and vLLM's multi_modal_data take; a picture that cannot be
    decoded (damaged, a decompression bomb) fails its request alone, a RequestError naming it and the damage."""
    try:
        return [rgb(image.picture()) for image in images]
    except ConfigError as exc:
        raise RequestError(f"a picture of the request cannot be decoded: {exc}") from None


def rgb(picture: Any) -> Any:
    """A PIL image in RGB as vLLM reads an image it is sent (`convert_image_mode`): an RGBA one laid over white (a
    plain `convert("RGB")` keeps the colour under each transparent pixel, often black), any other mode converted."""
    from PIL import Image as PILImage

    if picture.mode != "RGBA":
        return picture.convert("RGB")
    over_white = PILImage.new("RGB", picture.size, (255, 255, 255))
    over_white.paste(picture, mask=picture.getchannel("A"))
    return over_white


def template_turn(turn: ChatMessage) -> dict[str, Any]:
    """A turn as a processor's chat template reads it: content as typed parts, an image part `{"type": "image"}`."""
    content = content_of(turn, text_part, lambda image: {"type": "image"})
    return {"role": turn["role"], "content": content if "parts" in turn else [text_part(content or "")]}


def vision_prompt(processor: Any, request: Request) -> tuple[str, list[Any]]:
    """(the text the model reads, with its image placeholders; its images in order) for a request with images."""
    images = pil_images(request.sent_images)
    if not request.is_chat:
        return str(request.prompt), images
    turns = [template_turn(turn) for turn in chat_messages(request)]
    return str(processor.apply_chat_template(turns, add_generation_prompt=True, tokenize=False)), images
