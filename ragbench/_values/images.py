"""An image a sample holds or a request sends: its bytes, their media type and the sha256 of the bytes.

`Image.of` takes what tasks give: a file path, bytes, a `datasets` Image feature's value (`{"bytes", "path"}`
undecoded, or a PIL image decoded) or an `Image`. The bytes are read once, at `of`: what identifies an image
(in a cache key, a record, a replay) is its digest, never where it was read from, so the same picture under two
paths is one image and a file changed behind a path is another.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragbench._errors import ConfigError

# Leading bytes of the formats vision models and vendors take (PNG, JPEG, GIF, WebP, BMP, TIFF).
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
)


def media_type_of(data: bytes) -> str | None:
    """The image format the bytes begin with, as a media type; None where they begin as none of them."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _MAGIC if data.startswith(magic)), None)


@dataclass(frozen=True)
class Image:
    """An image's bytes (kept in memory: a sample's few images), their media type and their sha256."""

    data: bytes = field(repr=False)
    media_type: str
    source: str | None = field(default=None, compare=False)  # where it was read from, for messages only

    @property
    def digest(self) -> str:
        """sha256 of the bytes, hex: the image's identity everywhere a request is keyed or recorded."""
        return hashlib.sha256(self.data).hexdigest()

    def __repr__(self) -> str:  # the digest, not the bytes: a request's repr is its cache key's payload
        return f"Image(sha256={self.digest}, media_type={self.media_type!r}, bytes={len(self.data)})"

    @classmethod
    def of(cls, value: Any, *, source: str | None = None) -> Image:
        """An image from a path (str or Path), bytes, a `datasets` Image value or a PIL image."""
        if isinstance(value, Image):
            return value
        if isinstance(value, (str, Path)):
            return _from_path(Path(value).expanduser())
        if isinstance(value, (bytes, bytearray, memoryview)):
            return _from_bytes(bytes(value), source or "image bytes")
        if isinstance(value, dict) and ("bytes" in value or "path" in value):  # datasets' Image(decode=False)
            if value.get("bytes") is not None:
                return _from_bytes(bytes(value["bytes"]), str(value.get("path") or source or "image bytes"))
            if value.get("path"):
                return _from_path(Path(str(value["path"])).expanduser())
        if hasattr(value, "save") and hasattr(value, "mode"):  # a PIL image (datasets' decoded Image feature)
            return _from_pil(value, source)
        raise ConfigError(
            f"an image must be a file path, bytes, a datasets Image value or a PIL image, not {type(value).__name__}"
        )


def _from_path(path: Path) -> Image:
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, PermissionError) as error:
        raise ConfigError(f"image {path}: {error.strerror or error}; give the path of an image file") from None
    return _from_bytes(data, str(path))


def _from_bytes(data: bytes, source: str) -> Image:
    kind = media_type_of(data)
    if kind is None:
        raise ConfigError(
            f"{source}: not an image this reader knows (PNG, JPEG, GIF, WebP, BMP or TIFF by its first bytes)"
        )
    return Image(data=data, media_type=kind, source=source)


def _from_pil(image: Any, source: str | None) -> Image:
    """A decoded PIL image as its original file's bytes where PIL kept them (`image.format`), PNG otherwise."""
    fmt = (getattr(image, "format", None) or "PNG").upper()
    buffer = io.BytesIO()
    image.save(buffer, format=fmt if fmt in {"PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF"} else "PNG")
    return _from_bytes(buffer.getvalue(), source or getattr(image, "filename", "") or "PIL image")
