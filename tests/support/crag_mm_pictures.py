"""Pictures for the CRAG-MM agent-format parity (tests/data/parity/crag_mm_agent_formats.json): gradients, so that a
resize's filter shows in the pixels, of sizes that take each branch of Qwen's resize (under its least pixels, between,
over its most), one with transparency (a web PNG's). Pillow only: the recorder makes the same pictures in the
upstream venv."""

from __future__ import annotations

import io

PICTURES = (((16, 12), "RGB"), ((700, 500), "RGB"), ((1600, 1200), "RGB"), ((333, 777), "RGBA"), ((900, 40), "RGB"))


def gradient_png(size: tuple[int, int], mode: str = "RGB") -> bytes:
    """A PNG of `size` (width, height): Pillow's linear and radial gradients as its red, green and blue (RGBA: the
    radial one, turned, as its alpha)."""
    from PIL import Image

    linear, radial = Image.linear_gradient("L").resize(size), Image.radial_gradient("L").resize(size)
    bands = [linear, radial, linear.transpose(Image.Transpose.FLIP_TOP_BOTTOM)]
    bands += [radial.transpose(Image.Transpose.ROTATE_180)] if mode == "RGBA" else []
    buffer = io.BytesIO()
    Image.merge(mode, bands).save(buffer, format="PNG")
    return buffer.getvalue()
