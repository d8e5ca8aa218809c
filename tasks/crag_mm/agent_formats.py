"""The example agents' own forms of the image and the chat (open_source_model_agents.py, closed_model_agents.py):
`agent=open` VlmAgent's (Llama), `closed` the API agents' (GPT, Claude, Gemini), `pixtral` PixtralAgent's, `qwen`
QwenAgent's, `internvl` InternVLAgent's. The three open models' agents are VlmAgents: the same text as `open`, each
with its own image turn and rendering.

- closed: the picture as the agent's JPEG data URL holds it (vLLM's `encode_image_base64`: RGB, an RGBA picture over
  white, saved as JPEG).
- qwen: that JPEG as `qwen_vl_utils.process_vision_info` hands it to vLLM: resized to sides that are multiples of 28
  with between 256·28·28 and 1280·960 pixels (the agent's min_pixels / max_pixels; `qwen_resize`).
- pixtral: the chat as mistral_common reads it (`MistralTokenizer.v3(is_tekken=True)`, `ChatCompletionRequest.
  from_openai`; `mistral_turns`): turns of one role in a row joined by a blank line, no system turn but the system
  prompt before the last user turn's text. The agent's image turn is the text "[IMG]"; here the picture, which the
  engine writes as the model's placeholder, with the blank line after it.
- internvl: `open`'s messages; the agent's image turn is the text "<image>", here the picture (as for `open`).
"""

from __future__ import annotations

import io
import math
from typing import Any

from ragbench.api import Image, Message, Part, chat_turn

AGENTS = ("open", "closed", "pixtral", "qwen", "internvl")
QWEN_FACTOR = 28  # Qwen2.5-VL's patch (14) times its spatial merge (2): qwen_vl_utils' resize factor
QWEN_MIN_PIXELS, QWEN_MAX_PIXELS = 256 * 28 * 28, 1280 * 960  # QwenAgent._build_image_content's
QWEN_MAX_RATIO = 200  # qwen_vl_utils' MAX_RATIO: a longer picture is refused
JOIN = "\n\n"  # mistral_common's between turns it joins, and after the system prompt


def _saved(picture: Any, source: str | None, format: str) -> Image:
    buffer = io.BytesIO()
    picture.save(buffer, format=format)
    return Image.of(buffer.getvalue(), source=source)


def as_jpeg(image: Image) -> Image:
    """The picture as the API agents and QwenAgent send it (vLLM's `encode_image_base64`): in RGB, an RGBA one over
    white (vLLM's `convert_image_mode`), saved as JPEG (PIL's default quality)."""
    from PIL import Image as PILImage

    picture = PILImage.open(io.BytesIO(image.data))
    if picture.mode == "RGBA":
        rgb = PILImage.new("RGB", picture.size, (255, 255, 255))
        rgb.paste(picture, mask=picture.getchannel("A"))
    else:
        rgb = picture.convert("RGB")
    return _saved(rgb, image.source, "JPEG")


def qwen_resize(height: int, width: int) -> tuple[int, int]:
    """qwen_vl_utils' smart_resize with QwenAgent's bounds: each side rounded to a multiple of 28, scaled down
    (floored) past the most pixels or up (ceiled) under the least, keeping the aspect. A picture more than 200
    times longer than wide (or wider than long) is a ValueError, as it is upstream's: its example fails."""
    ratio = max(height, width) / min(height, width)
    if ratio > QWEN_MAX_RATIO:
        raise ValueError(
            f"a picture of {width}x{height} pixels: Qwen's image processing (qwen_vl_utils) takes an aspect ratio "
            f"of at most {QWEN_MAX_RATIO}, this one's is {ratio:.1f}"
        )
    factor = QWEN_FACTOR
    h_bar, w_bar = (max(factor, round(side / factor) * factor) for side in (height, width))
    if h_bar * w_bar > QWEN_MAX_PIXELS:
        beta = math.sqrt(height * width / QWEN_MAX_PIXELS)
        return math.floor(height / beta / factor) * factor, math.floor(width / beta / factor) * factor
    if h_bar * w_bar < QWEN_MIN_PIXELS:
        beta = math.sqrt(QWEN_MIN_PIXELS / (height * width))
        return math.ceil(height * beta / factor) * factor, math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def as_qwen(image: Image) -> Image:
    """The picture QwenAgent hands vLLM: its JPEG, resized by `qwen_resize` (PIL's default filter), as PNG."""
    from PIL import Image as PILImage

    picture = PILImage.open(io.BytesIO(as_jpeg(image).data)).convert("RGB")
    height, width = qwen_resize(picture.height, picture.width)
    return _saved(picture.resize((width, height)), image.source, "PNG")


def agent_picture(agent: str, image: Image) -> Image:
    """The picture as `agent` sends it: the API agents' JPEG, Qwen's resized JPEG, else the example's."""
    if agent == "closed":
        return as_jpeg(image)
    return as_qwen(image) if agent == "qwen" else image


def mistral_turns(messages: list[Message]) -> list[Message]:
    """The chat as mistral_common's v3 normalizer reads PixtralAgent's: turns of one role in a row as one, joined
    by a blank line (a picture among them a part of its own), the system prompt and a blank line before the last
    user turn."""
    system = [m.content or "" for m in messages if m.role == "system"]
    turns: list[tuple[str, list[Part]]] = []
    for message in (m for m in messages if m.role != "system"):
        parts: list[Part] = list(message.parts) if message.parts else [message.content or ""]
        if turns and turns[-1][0] == message.role:
            parts = [*turns.pop()[1], JOIN, *parts]
        turns.append((message.role, parts))
    last = max(i for i, (role, _) in enumerate(turns) if role == "user")
    if system:
        turns[last] = (turns[last][0], [JOIN.join(system) + JOIN, *turns[last][1]])
    return [_joined(role, parts) for role, parts in turns]


def _joined(role: str, parts: list[Part]) -> Message:
    """Texts in a row as one; a turn of texts only as its text, else its parts (its pictures kept)."""
    out: list[Part] = []
    for part in parts:
        if isinstance(part, str) and out and isinstance(out[-1], str):
            out[-1] += part
        else:
            out.append(part)
    texts = [part for part in out if isinstance(part, str)]
    return Message(role, "".join(texts)) if len(texts) == len(out) else chat_turn(out, role)
