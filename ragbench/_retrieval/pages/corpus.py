"""A ViDoRe dataset's pages as a corpus: each page's id, and its image read from the table when it is encoded or
shown (a `Document` whose `image` is the page, its text empty).

The ids are those vidore-benchmark's evaluators score: a QA (V1) page's `image_filename` (rows sharing a
filename are one page: upstream keeps each filename's best score, the same for the same image), a BEIR (V2, V3)
page's `corpus-id` as a string (upstream casts the ids to strings for mteb). A page is its first row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..._errors import ConfigError
from ..._types import Document
from ..._values.images import Image
from .vidore_data import BEIR, QA, DataTable, ViDoReData, id_column

IMAGE = "image"
PAGE_INDEX = "page_index"  # Document.metadata: the page's place in the corpus (mteb's MRR orders ties by it)


@dataclass(frozen=True)
class PageCorpus:
    """The pages in corpus order: `ids[i]` is read from row `rows[i]` of `table`."""

    ids: tuple[str, ...]
    rows: tuple[int, ...]
    table: DataTable

    def __len__(self) -> int:
        return len(self.ids)

    def image(self, index: int) -> Image:
        """The page's image as its row holds it (a path in the row is read as a data file is: a FIFO or a folder
        there is refused, in one line naming it)."""
        row = self.rows[index]
        value = self.table.rows.column(IMAGE)[row].as_py()
        where = f"{self.table.where} row {row} (page {self.ids[index]!r})"
        if value is None:
            raise ConfigError(f"{self.table.where}: row {row} (page {self.ids[index]!r}) holds no image")
        try:
            return Image.of(value, source=where)
        except ConfigError as exc:  # its path names no picture file: the row too
            raise ConfigError(f"{where}: {exc}") from None

    def decoded(self, index: int) -> Any:
        """The page as a PIL image, as `datasets` decodes an Image value, which vidore-benchmark's loading does
        (`Image.dataset_picture`: mode kept, turned as its EXIF Orientation tag says); a page that cannot be decoded
        (cut short, damaged, a decompression bomb) is a ConfigError naming its row, page, the damage and the fix."""
        return self.image(index).dataset_picture()

    def document(self, index: int, score: float | None = None) -> Document:
        return Document(
            id=self.ids[index], title="", text="", score=score, metadata={PAGE_INDEX: index}, image=self.image(index)
        )


def page_corpus(data: ViDoReData) -> PageCorpus:
    """The pages of a ViDoRe dataset, each id once, in the order of the rows first holding it."""
    if data.layout == QA:
        table = data.tables[QA]
        keys = [str(name) for name in table.column("image_filename")]
    elif data.layout == BEIR:
        table = data.tables["corpus"]
        keys = [str(key) for key in table.column(id_column(table.rows, "corpus-id", table.where))]
    else:
        raise ValueError(data.layout)
    if IMAGE not in table.rows.column_names:
        raise ConfigError(f"{table.where}: no column 'image'; columns: {table.rows.column_names}")
    first: dict[str, int] = {}
    for row, key in enumerate(keys):
        first.setdefault(key, row)
    return PageCorpus(tuple(first), tuple(first.values()), table)
