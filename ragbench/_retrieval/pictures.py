"""A query picture (an `Image`) as Pillow decodes it, for a retriever that searches by picture."""

from __future__ import annotations

from typing import Any

from .._errors import ConfigError
from .._values.images import Image
from .base import RetrievalError


def opened_picture(image: Image, retriever: str, what: str) -> Any:
    """The picture decoded (`Image.picture`), or the RetrievalError its search gets where it cannot be (damaged, a
    decompression bomb): that search fails, a batch's others do not."""
    try:
        return image.picture()
    except ConfigError as exc:
        return RetrievalError(f"retriever {retriever}: {what} could not be read ({exc})")
