"""A ViDoRe dataset's pages as a `corpus.PageCorpus`: the rows whose images are encoded and the page each is.

The ids are those vidore-benchmark's evaluators score: a QA (V1) row's `image_filename`, a BEIR (V2, V3) row's
`corpus-id` as a string (upstream casts the ids to strings for mteb). Upstream encodes every row's image and
scores every row: every row is one of the corpus's, in table order.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._errors import ConfigError
from ..._values.images import Image
from ..._values.json_values import JsonObject
from .vidore_data import BEIR, QA, DataTable, ViDoReData, id_column

IMAGE = "image"


@dataclass(frozen=True)
class ViDoRePages:
    """The rows of a ViDoRe dataset's pages table (`table`), row i of the page `row_ids[i]`, read from `data`'s
    `split`."""

    data: ViDoReData
    split: str
    table: DataTable
    row_ids: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.row_ids)

    def image(self, row: int) -> Image:
        """The image of row `row` as the table holds it (a path in the row is read as a data file is: a FIFO or a
        folder there is refused, in one line naming it)."""
        value = self.table.rows.column(IMAGE)[row].as_py()
        where = f"{self.table.where} row {row} (page {self.row_ids[row]!r})"
        if value is None:
            raise ConfigError(f"{where} holds no image")
        try:
            return Image.of(value, source=where)
        except ConfigError as exc:  # its path names no picture file: the row too
            raise ConfigError(f"{where}: {exc}") from None

    def identity(self) -> JsonObject:
        return {"path": str(self.data.folder.resolve()), "split": self.split, "sha256": self.data.sha256}


def vidore_pages(data: ViDoReData, split: str) -> ViDoRePages:
    """The rows of a ViDoRe dataset's pages, each encoded, in table order."""
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
    return ViDoRePages(data, split, table, tuple(keys))
