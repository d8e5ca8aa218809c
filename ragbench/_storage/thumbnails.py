"""The thumbnails a run keeps of its examples' images, `<run>/images/<sha256>.png` (at most 256 pixels a side):
what the viewer shows of a sample's images. A run folder holds no bytes of the user's data but what ragbench wrote;
a thumbnail is ragbench's own, made from the image, and the image itself stays with the task's data (a sample
records it by digest, `Image.record`). Each is written once, replaced whole, and named by the image's digest:
the same picture in two examples or two attempts is one file.

A thumbnail is read back (`thumbnail_url`) only as what ragbench wrote: a regular file, never through a symbolic
link (one to a credentials file would be shown, base64 and all, in an exported site), a FIFO or a device (which
would hang the viewer or never end), of at most `MOST_BYTES`, that decodes as a PNG of at most 256 pixels a side.
An image Pillow cannot decode, or a thumbnail that cannot be kept, costs the viewer its thumbnail, never the run
its samples: one warning line names it."""

from __future__ import annotations

import base64
import io
import logging
import os
import stat
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from .._errors import ConfigError
from .._regular_files import NotAFileError, open_file
from .._values.images import Image
from .files import replacing

THUMBNAILS = "images"  # the run folder's folder of them
SIDE = 256
MOST_BYTES = 2**20  # an RGB PNG of 256 x 256 pixels is under 200 KB, whatever it shows
log = logging.getLogger(__name__)


def thumbnail_path(run: Path, digest: str) -> Path:
    return run / THUMBNAILS / f"{digest}.png"


def keep_thumbnails(run: Path, images: Iterable[Image]) -> None:
    """A thumbnail of each image not yet kept (a regular file at its name; anything else there, a link or a FIFO,
    is replaced, never written through). An image Pillow cannot decode (damaged, a decompression bomb) gets none, in
    a warning line naming it, the damage and the fix; so does one where a folder takes the name, or where `images`
    is no folder of the run's own. A disk fault is the run's to report, as for any file it writes."""
    folder = run / THUMBNAILS
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        _warn_once(f"{folder} is not a folder of the run's own (a link or a file): no thumbnails kept; remove it")
        return
    for image in images:
        path = thumbnail_path(run, image.digest)
        if _kept(path):
            continue
        try:
            made = _thumbnail(image)
        except ImportError:  # no Pillow: no thumbnails (the viewer says none was kept)
            return
        except ConfigError as exc:
            log.warning("ragbench: warning: no thumbnail kept (the viewer shows none): %s", exc)
            continue
        folder.mkdir(exist_ok=True)
        try:
            with replacing(path) as handle:
                handle.write(made)
        except IsADirectoryError:
            _warn_once(f"{path} is a folder: no thumbnail kept of that image; remove it")


def _kept(path: Path) -> bool:
    """Whether a regular file is at `path` itself (not through a link)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _thumbnail(image: Image) -> bytes:
    """The image, scaled to at most SIDE a side (its aspect kept), as an RGB PNG; a ConfigError naming the image
    where Pillow cannot decode it."""
    picture = image.picture()
    picture.thumbnail((SIDE, SIDE))
    buffer = io.BytesIO()
    picture.convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def thumbnail_url(run: Path, digest: str) -> str | None:
    """The kept thumbnail of the image of `digest` as a `data:` URL (what the viewer's page shows, served or
    exported alike); None where the run kept none, or where what is at its name is not a thumbnail ragbench wrote
    (`kept_thumbnail`)."""
    if not (len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
        return None  # a digest from a hand-edited line names no file outside the folder
    data = kept_thumbnail(thumbnail_path(run, digest))
    return None if data is None else "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def kept_thumbnail(path: Path) -> bytes | None:
    """The bytes of the thumbnail at `path` where it is one ragbench wrote (`_thumbnail_bytes`); None where nothing
    is there, or (with a warning line, once a file, saying what is there instead) anything else."""
    try:
        return _thumbnail_bytes(path)
    except FileNotFoundError:
        return None
    except NotAThumbnail as exc:
        _warn_once(f"{path} is not a thumbnail ragbench wrote ({exc}): not shown; remove it")
        return None


class NotAThumbnail(ValueError):
    """What is at a thumbnail's name instead of one ragbench wrote."""


def _thumbnail_bytes(path: Path) -> bytes:
    """The file at `path` where it is a regular file there itself (never through a link), of at most MOST_BYTES,
    a PNG of at most SIDE pixels a side; else NotAThumbnail saying what it is."""
    try:
        with open_file(path, follow=False) as handle:
            data: bytes = handle.read(MOST_BYTES + 1)
    except NotAFileError as exc:
        raise NotAThumbnail(exc.strerror) from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise NotAThumbnail(f"cannot be read: {exc.strerror or exc}") from None
    if len(data) > MOST_BYTES:
        raise NotAThumbnail(f"over {MOST_BYTES:,} bytes")
    try:
        picture = Image.of(data, source=str(path)).picture()
    except ConfigError:
        raise NotAThumbnail("no picture Pillow decodes") from None
    if picture.format != "PNG" or max(picture.size) > SIDE:
        raise NotAThumbnail(f"a {picture.format} picture of {picture.width}x{picture.height} pixels")
    return data


@cache
def _warn_once(line: str) -> None:
    """`line` as a warning, once a process (a page served again, an image in many examples)."""
    log.warning("ragbench: warning: %s", line)
