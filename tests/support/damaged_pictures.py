"""Real pictures that a plain RGB PNG does not cover, made with Pillow: a decompression bomb (a PNG of 24 KB
declaring 200 million pixels, over the 178,956,970 Pillow decodes), a PNG cut short, a CMYK JPEG, a JPEG whose
EXIF Orientation tag turns it."""

from __future__ import annotations

import functools
import io
from typing import Any

BOMB_SIZE = (20000, 10000)  # 200,000,000 pixels: Pillow's DecompressionBombError (over twice MAX_IMAGE_PIXELS)


def png(color: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


@functools.cache  # bytes, never changed: made once per process (encoding 200 million pixels takes a second)
def bomb_png() -> bytes:
    """A bilevel PNG of BOMB_SIZE: small on disk, refused by Pillow as a decompression bomb when opened."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("1", BOMB_SIZE).save(buffer, format="PNG")
    return buffer.getvalue()


def truncated_png(color: tuple[int, int, int] = (9, 99, 199), size: tuple[int, int] = (64, 48)) -> bytes:
    """A PNG cut in the middle of its pixel data (its header whole: Pillow opens it, then cannot load it)."""
    whole = noisy_png(color, size)
    return whole[: len(whole) // 2]


def noisy_png(color: tuple[int, int, int], size: tuple[int, int]) -> bytes:
    """A PNG whose pixels do not compress to a few bytes (so that cutting it cuts its pixel data)."""
    from PIL import Image

    picture = Image.effect_noise(size, 64).convert("RGB")
    picture = Image.blend(picture, Image.new("RGB", size, color), 0.5)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def gradient(size: tuple[int, int], mode: str = "RGB") -> Any:
    """A picture of `size` whose bands are Pillow's gradients (a turn or a resize shows in its pixels); CMYK: the
    same three bands as C, M, Y, K empty."""
    from PIL import Image

    linear, radial = Image.linear_gradient("L").resize(size), Image.radial_gradient("L").resize(size)
    bands = [linear, radial, linear.transpose(Image.Transpose.FLIP_TOP_BOTTOM)]
    return Image.merge("CMYK", [*bands, Image.new("L", size, 0)]) if mode == "CMYK" else Image.merge("RGB", bands)


def jpeg(size: tuple[int, int] = (48, 32), mode: str = "RGB", orientation: int | None = None) -> bytes:
    """A gradient JPEG (`mode` RGB or CMYK) with the EXIF Orientation tag `orientation` where one is given."""
    from PIL import Image

    exif = Image.Exif()
    if orientation is not None:
        exif[0x0112] = orientation
    buffer = io.BytesIO()
    gradient(size, mode).save(buffer, format="JPEG", exif=exif.tobytes())
    return buffer.getvalue()
