"""A folder of page images as a `corpus.PageCorpus`: each picture file one page, whose id is its path in the folder
(`reports/2024/p-003.png`), in the order of those paths.

A picture file is one whose extension Pillow gives to a format an `Image` is read as (PNG, JPEG, GIF, WebP, BMP,
TIFF), in any case; other files (a README, a PDF) are not pages, nor are hidden ones (a name starting with `.`: a
`.DS_Store`, macOS's `._p-003.png`, a `.git` folder). Subfolders are read, a link to a folder is not followed (a
link to a file is read). Each file is looked at before its bytes are: a FIFO, a device or a socket is refused in one
line, never waited on. A folder of pages has no splits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..._errors import ConfigError
from ..._storage.given_files import given_files_there
from ..._values.images import Image
from ..._values.json_values import JsonObject
from ..corpus.saved import folder_sha256

FORMATS = ("PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF")  # those `Image.of` reads
PAGE_FORMATS = "PNG, JPEG, GIF, WebP, BMP or TIFF files"
DEFAULT_SPLIT = "test"  # the retrievers' `split`, which a folder does not take


def picture_extensions() -> frozenset[str]:
    """The file extensions Pillow reads as one of `FORMATS` (`.png`, `.jpg`, `.jpeg`, `.jfif`, `.tif` ...)."""
    from PIL import Image as PILImage

    return frozenset(ext for ext, kind in PILImage.registered_extensions().items() if kind in FORMATS)


def picture_files(folder: Path) -> list[Path]:
    """The picture files in `folder` and its subfolders, hidden ones left out (module docstring), by path."""
    extensions = picture_extensions()
    found: list[Path] = []
    for where, folders, files in os.walk(folder):
        folders[:] = [name for name in folders if not name.startswith(".")]
        found.extend(
            Path(where) / name
            for name in files
            if not name.startswith(".") and os.path.splitext(name)[1].lower() in extensions
        )
    return sorted(found, key=lambda path: path.relative_to(folder).as_posix())


@dataclass(frozen=True)
class PageFolder:
    """The page images `files` of `folder`, one row (and page) each."""

    folder: Path
    files: tuple[Path, ...]

    @property
    def row_ids(self) -> tuple[str, ...]:
        return tuple(path.relative_to(self.folder).as_posix() for path in self.files)

    def __len__(self) -> int:
        return len(self.files)

    def image(self, row: int) -> Image:
        """The picture file of row `row` (`Image.of`'s one line where it cannot be read names its path)."""
        return Image.of(self.files[row])

    def identity(self) -> JsonObject:
        """The folder and the digest of its page files (names, sizes, bytes)."""
        return {"path": str(self.folder.resolve()), "sha256": folder_sha256(self.folder, list(self.files))}


def page_folder(folder: Path, split: str, what: str) -> PageFolder:
    """The page images of `folder`; one line where it holds none, or where a split is asked of it."""
    files = picture_files(folder)
    if not files:
        raise ConfigError(
            f"{what}: {folder} is no ViDoRe dataset (expected corpus/, queries/ and qrels/ (V2, V3), or "
            f"data/{split}-*.parquet or a save_to_disk folder (V1)) and holds no page images ({PAGE_FORMATS}, "
            "hidden ones left out)"
        )
    if split != DEFAULT_SPLIT:
        raise ConfigError(f"{what}: {folder} is a folder of page images, which has no splits: drop split={split}")
    given_files_there(files, "a page image file")
    return PageFolder(folder.absolute(), tuple(path.absolute() for path in files))
