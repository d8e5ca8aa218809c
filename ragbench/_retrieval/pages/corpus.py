"""A ViDoRe dataset's pages as a corpus: each page's id, and its image read from the table when it is encoded or
shown (a `Document` whose `image` is the page, its text empty).

The ids are those vidore-benchmark's evaluators score: a QA (V1) page's `image_filename` (rows sharing a
filename are one page: upstream keeps each filename's best score, the same for the same image), a BEIR (V2, V3)
page's `corpus-id` as a string (upstream casts the ids to strings for mteb). A page is its first row.
"""

from __future__ import annotations

import io
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
        row = self.rows[index]
        value = self.table.rows.column(IMAGE)[row].as_py()
        if value is None:
            raise ConfigError(f"{self.table.where}: row {row} (page {self.ids[index]!r}) holds no image")
        return Image.of(value, source=f"{self.table.where} row {row}")

    def decoded(self, index: int) -> Any:
        """The page as a PIL image, as `datasets` decodes an Image value (opened from its bytes, mode kept)."""
        import PIL.Image

        return PIL.Image.open(io.BytesIO(self.image(index).data))

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
