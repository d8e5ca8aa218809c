"""An image a sample holds or a request sends: its bytes, their media type and the sha256 of the bytes.

`Image.of` takes what tasks give: a file path, bytes, a `datasets` Image feature's value (`{"bytes", "path"}`
undecoded, or a PIL image decoded) or an `Image`. The bytes are read once, at `of`: what identifies an image
(in a cache key, a record, a replay) is its digest, never where it was read from, so the same picture under two
paths is one image and a file changed behind a path is another. A path is read as the user's data files are
(ragbench._regular_files): a FIFO, device or folder there is refused at once, never waited on.

`picture` and `dataset_picture` decode the bytes (Pillow, loaded whole); whatever the damage (bytes cut short or
flipped, not a picture, more pixels than Pillow's decompression-bomb limit) the one error is a ConfigError naming
the image, the damage and the fix.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragbench._errors import ConfigError
from ragbench._regular_files import OUT_OF_RESOURCES, NotAFileError, open_file

from .json_values import JsonObject

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
PNG_MODES = frozenset({"1", "L", "LA", "I", "I;16", "I;16B", "P", "RGB", "RGBA"})  # the modes Pillow writes as PNG


def media_type_of(data: bytes) -> str | None:
    """The image format the bytes begin with, as a media type; None where they begin as none of them."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _MAGIC if data.startswith(magic)), None)


@dataclass(frozen=True)
class Image:
    """An image's bytes (kept in memory: a sample's few images), their media type and their sha256.

    What the later steps read of it is computed once, when it is made, and read as plain fields: `digest`, the
    image's identity everywhere a request is keyed or recorded, and `key`, what a cache key holds of it (its repr).
    A request's key and an engine's body read them without calling back into this module."""

    data: bytes = field(repr=False)
    media_type: str
    source: str | None = field(default=None, compare=False)  # where it was read from, for messages only
    digest: str = field(init=False, repr=False, compare=False)  # sha256 of the bytes, hex
    key: str = field(init=False, repr=False, compare=False)  # the digest, media type and size: never bytes or path

    def __post_init__(self) -> None:
        digest = hashlib.sha256(self.data).hexdigest()
        object.__setattr__(self, "digest", digest)
        object.__setattr__(
            self, "key", f"Image(sha256={digest}, media_type={self.media_type!r}, bytes={len(self.data)})"
        )

    def record(self, *, source: bool = False) -> JsonObject:
        """What a record holds of the image: its digest, media type and size, never its bytes or path (the same
        picture from two paths is one request); `source`: where the task read it from too (a sample's record)."""
        out: JsonObject = {"sha256": self.digest, "media_type": self.media_type, "bytes": len(self.data)}
        if source and self.source:
            out["source"] = self.source
        return out

    def __repr__(self) -> str:  # the digest, not the bytes: a request's repr is its cache key's payload
        return self.key

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
                return _from_bytes(bytes(value["bytes"]), source or str(value.get("path") or "image bytes"))
            if value.get("path"):
                return _from_path(Path(str(value["path"])).expanduser())
        if hasattr(value, "save") and hasattr(value, "mode"):  # a PIL image (datasets' decoded Image feature)
            return _from_pil(value, source)
        raise ConfigError(
            f"an image must be a file path, bytes, a datasets Image value or a PIL image, not {type(value).__name__}"
        )

    def picture(self) -> Any:
        """The picture Pillow decodes from the bytes, loaded whole: its pixels as they are stored (what the local
        engines read of an image they are sent). A ConfigError where it cannot be decoded (`_decoded`)."""
        return self._decoded(_pillow_picture)

    def dataset_picture(self) -> Any:
        """The picture as a `datasets` Image feature decodes a dataset's image (its own `decode_example` of the
        bytes: Pillow's decoding, then, from datasets 2.19 on (huggingface/datasets#6739), turned as its EXIF
        Orientation tag says), what a benchmark's upstream code that reads the dataset with `datasets` gets. A
        ConfigError where it cannot be decoded (`_decoded`)."""
        import datasets  # imported here: a missing library is not the picture's damage

        feature = datasets.Image()
        return self._decoded(lambda data: feature.decode_example({"bytes": data, "path": None}))

    def as_dataset_decodes(self, size: tuple[int, int] | None = None) -> Image:
        """The image as a `datasets` Image feature decodes it (`dataset_picture`), resized to `size` (width, height)
        where one is given: itself where decoding changed nothing (a picture without an EXIF turn, its format and
        bytes kept), else the decoded picture's own. A ConfigError where it cannot be decoded (`_decoded`)."""
        picture = self.dataset_picture()
        if size is not None:
            return Image.of(picture.resize(size), source=self.source)
        return self if picture.format else Image.of(picture, source=self.source)

    def _decoded(self, decode: Callable[[bytes], Any]) -> Any:
        """`decode(data)`, or a ConfigError of one line naming the image (`source`), the damage and the fix."""
        from PIL import Image as PILImage

        where = self.source or f"image sha256:{self.digest}"
        try:
            return decode(self.data)
        except MemoryError:  # the machine's
            raise
        except PILImage.DecompressionBombError:
            most = 2 * (PILImage.MAX_IMAGE_PIXELS or 0)  # Pillow refuses more than twice its MAX_IMAGE_PIXELS
            raise ConfigError(
                f"{where}: a picture of more than {most:,} pixels, which Pillow refuses to decode (a decompression "
                "bomb's size); give a smaller picture"
            ) from None
        except Exception as exc:  # a decoder meeting damaged bytes raises what its parser meets (OSError,
            # SyntaxError, struct.error, IndexError ...): each is this picture's damage, never the run's
            raise ConfigError(
                f"{where}: the picture cannot be decoded ({_damage(exc)}); replace it with an undamaged copy"
            ) from None


def _from_path(path: Path) -> Image:
    """The image file at `path`, read only where a regular file is there (`open_file`)."""
    try:
        with open_file(path) as handle:
            data = handle.read()
    except NotAFileError as exc:
        raise ConfigError(
            f"image {path}: {exc.strerror}; ragbench reads only a regular file there: give the path of an image file"
        ) from None
    except OSError as exc:
        if exc.errno in OUT_OF_RESOURCES:
            raise
        raise ConfigError(f"image {path}: {exc.strerror or exc}; give the path of an image file") from None
    return _from_bytes(data, str(path))


def _from_bytes(data: bytes, source: str) -> Image:
    kind = media_type_of(data)
    if kind is None:
        raise ConfigError(
            f"{source}: not an image this reader knows (PNG, JPEG, GIF, WebP, BMP or TIFF by its first bytes)"
        )
    return Image(data=data, media_type=kind, source=source)


def _from_pil(image: Any, source: str | None) -> Image:
    """A decoded PIL image saved in its original file's format where PIL kept it (`image.format`), PNG otherwise;
    a picture in a mode PNG cannot hold (CMYK, YCbCr, LAB, HSV, F) in RGB, as every model reads it (vLLM's
    `convert_image_mode`, the vendors' SDKs): never the OSError of a mode PNG cannot write."""
    fmt = (getattr(image, "format", None) or "PNG").upper()
    fmt = fmt if fmt in {"PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF"} else "PNG"
    if fmt == "PNG" and image.mode not in PNG_MODES:
        image = image.convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    return _from_bytes(buffer.getvalue(), source or getattr(image, "filename", "") or "PIL image")


def _pillow_picture(data: bytes) -> Any:
    from PIL import Image as PILImage

    picture = PILImage.open(io.BytesIO(data))
    picture.load()
    return picture


def _damage(exc: Exception) -> str:
    """What an exception of a decoder says of the bytes, without the repr of the buffer it read."""
    from PIL import UnidentifiedImageError

    if isinstance(exc, UnidentifiedImageError):
        return "no format Pillow reads"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
