"""The thumbnails a run keeps of its examples' images, `<run>/images/<sha256>.png` (at most 256 pixels a side):
what the viewer shows of a sample's images. A run folder holds no bytes of the user's data but what ragbench wrote;
a thumbnail is ragbench's own, made from the image, and the image itself stays with the task's data (a sample
records it by digest, `image_summary`). Each is written once, replaced whole, and named by the image's digest:
the same picture in two examples or two attempts is one file."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable
from pathlib import Path

from .._values.images import Image
from .files import replacing

THUMBNAILS = "images"  # the run folder's folder of them
SIDE = 256


def thumbnail_path(run: Path, digest: str) -> Path:
    return run / THUMBNAILS / f"{digest}.png"


def keep_thumbnails(run: Path, images: Iterable[Image]) -> None:
    """A thumbnail of each image not yet kept; an image PIL cannot decode gets none (the viewer says so). A disk
    fault is the run's to report, as for any file it writes."""
    for image in images:
        path = thumbnail_path(run, image.digest)
        if path.exists():
            continue
        made = _thumbnail(image.data)
        if made is None:
            continue
        path.parent.mkdir(exist_ok=True)
        with replacing(path) as handle:
            handle.write(made)


def _thumbnail(data: bytes) -> bytes | None:
    try:
        from PIL import Image as PILImage

        with PILImage.open(io.BytesIO(data)) as picture:
            picture.thumbnail((SIDE, SIDE))
            buffer = io.BytesIO()
            picture.convert("RGB").save(buffer, format="PNG")
    except (ImportError, OSError, ValueError, SyntaxError):  # no PIL, or bytes it cannot decode (an OSError)
        return None
    return buffer.getvalue()


def thumbnail_url(run: Path, digest: str) -> str | None:
    """The kept thumbnail of the image of `digest` as a `data:` URL (what the viewer's page shows, served or
    exported alike); None where the run kept none."""
    if not (len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
        return None  # a digest from a hand-edited line names no file outside the folder
    try:
        data = thumbnail_path(run, digest).read_bytes()
    except OSError:
        return None
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")
