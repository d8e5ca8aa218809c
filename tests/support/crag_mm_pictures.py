"""Pictures for the CRAG-MM agent-format parity (tests/data/parity/crag_mm_agent_formats.json): gradients, so that a
resize's filter shows in the pixels, of sizes that take each branch of Qwen's resize (under its least pixels, between,
over its most). Pillow only: the recorder makes the same pictures in the upstream venv."""

from __future__ import annotations

import io

SIZES = ((16, 12), (700, 500), (1600, 1200), (333, 777), (900, 40))


def gradient_png(size: tuple[int, int]) -> bytes:
    """A PNG of `size` (width, height): Pillow's linear and radial gradients as its red, green and blue."""
    from PIL import Image

    linear, radial = Image.linear_gradient("L").resize(size), Image.radial_gradient("L").resize(size)
    buffer = io.BytesIO()
    Image.merge("RGB", (linear, radial, linear.transpose(Image.Transpose.FLIP_TOP_BOTTOM))).save(buffer, format="PNG")
    return buffer.getvalue()
