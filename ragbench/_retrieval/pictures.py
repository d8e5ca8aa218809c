"""A query picture (an `Image`'s bytes) as PIL decodes it, for a retriever that searches by picture."""

from __future__ import annotations

import io
from typing import Any

from .base import RetrievalError


def opened_picture(data: bytes, retriever: str, what: str) -> Any:
    """The picture decoded, or the RetrievalError its search gets (that search fails, a batch's others do not)."""
    from PIL import Image as PILImage

    try:
        picture = PILImage.open(io.BytesIO(data))
        picture.load()
    except (OSError, ValueError) as exc:
        return RetrievalError(f"retriever {retriever}: {what} could not be read ({exc})")
    return picture
