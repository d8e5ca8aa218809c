"""What a page retriever (`colpali`, `siglip`) reads of its pages: a `PageCorpus`, whichever way the pages are kept
(a ViDoRe dataset: `vidore_pages`; a folder of page images: `folder`), and `open_pages`, the corpus a retriever's
`pages=` (`index build --corpus`) names.

A corpus is rows, each one picture encoded and scored; a row is a page, named by its id. Several rows may be one
page (ViDoRe V1's filename on several rows, even with different pictures: vidore-benchmark encodes and scores
every row, and its `results` keep one score a page id); `page_set` makes the pages of the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..._errors import ConfigError
from ..._values.images import Image
from ..._values.json_values import JsonObject
from .folder import PAGE_FORMATS, page_folder
from .vidore_data import read_vidore, snapshot
from .vidore_pages import vidore_pages


@runtime_checkable
class PageCorpus(Protocol):
    """Pages a page retriever encodes and searches: `len` rows, row i the picture `image(i)` of the page
    `row_ids[i]` (one page may be several rows: the page scores as its best row). `identity()` is what the pages
    are, as a page index's manifest records them (where they were read, a digest of their bytes): an index is read
    again only by a corpus of the same identity."""

    @property
    def row_ids(self) -> Sequence[str]: ...

    def __len__(self) -> int: ...

    def image(self, row: int) -> Image:
        """Row `row`'s picture; a ConfigError of one line naming the row where it cannot be read."""
        ...

    def identity(self) -> JsonObject: ...


def open_pages(path: str | Path | None, split: str, what: str) -> PageCorpus:
    """The pages at `path`: a ViDoRe dataset kept offline (its `split`), or a folder of page images; a missing
    folder, or one that holds neither, is one line saying what it should hold."""
    if path is None:
        raise ConfigError(
            f"{what} names the pages: a ViDoRe dataset's folder (a save_to_disk folder, the hub repository's Parquet "
            f"files, or its hub cache folder datasets--vidore--NAME) or a folder of page images ({PAGE_FORMATS})"
        )
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ConfigError(
            f"{what}: {folder} not found; name a ViDoRe dataset's folder (download it where the hub is reachable: "
            f"`hf download vidore/NAME --repo-type dataset --local-dir FOLDER`) or a folder of page images"
        )
    data = read_vidore(snapshot(folder), split, what)
    if data is not None:
        return vidore_pages(data, split)
    return page_folder(folder, split, what)
