"""A ViDoRe dataset's pages as a corpus: the rows whose images are encoded, the page each is, and each page's
score as vidore-benchmark's evaluators make it from its rows' scores (`page_scores`).

The ids are those vidore-benchmark's evaluators score: a QA (V1) row's `image_filename`, a BEIR (V2, V3) row's
`corpus-id` as a string (upstream casts the ids to strings for mteb). Upstream encodes every row's image and
scores every row, and its `results` keep one score a page id: rows sharing an id (V1's filename on several rows,
even with different pictures) are one page, scored by its best row. A page's Document shows the image of the row
that gave its score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..._errors import ConfigError
from ..._types import Document
from ..._values.images import Image
from .ranking import PAGE_INDEX
from .vidore_data import BEIR, QA, DataTable, ViDoReData, id_column

IMAGE = "image"
VIDORE_SCORES = "vidore"  # a page's score as upstream's `results` make it: its best row's, floored at 0 (below)
RAW_SCORES = "raw"  # a page's best row's score as the model gave it


@dataclass(frozen=True)
class PageScores:
    """One query's pages: `scores[p]` the score of page `ids[p]`, given by its row `rows[p]` (an index of the
    corpus's rows)."""

    scores: list[float]
    rows: list[int]


@dataclass(frozen=True)
class PageCorpus:
    """The rows encoded, in table order: row i is table row `table_rows[i]`, of page `row_ids[i]`; `ids` each
    page once, in the order of the rows first holding it (upstream's `results` order). `len` is the rows'."""

    table_rows: tuple[int, ...]
    row_ids: tuple[str, ...]
    table: DataTable
    ids: tuple[str, ...] = field(init=False)
    row_pages: tuple[int, ...] = field(init=False)  # each row's page: an index of `ids`

    def __post_init__(self) -> None:
        places = {key: place for place, key in enumerate(dict.fromkeys(self.row_ids))}
        object.__setattr__(self, "ids", tuple(places))
        object.__setattr__(self, "row_pages", tuple(places[key] for key in self.row_ids))

    def __len__(self) -> int:
        return len(self.row_ids)

    def image(self, row: int) -> Image:
        """The image of corpus row `row` as the table holds it (a path in the row is read as a data file is: a FIFO
        or a folder there is refused, in one line naming it)."""
        at = self.table_rows[row]
        value = self.table.rows.column(IMAGE)[at].as_py()
        where = f"{self.table.where} row {at} (page {self.row_ids[row]!r})"
        if value is None:
            raise ConfigError(f"{where} holds no image")
        try:
            return Image.of(value, source=where)
        except ConfigError as exc:  # its path names no picture file: the row too
            raise ConfigError(f"{where}: {exc}") from None

    def decoded(self, row: int) -> Any:
        """Row `row`'s page as a PIL image, as `datasets` decodes an Image value, which vidore-benchmark's loading
        does (`Image.dataset_picture`: mode kept, turned as its EXIF Orientation tag says); a page that cannot be
        decoded (cut short, damaged, a decompression bomb) is a ConfigError naming its row, page, the damage and the
        fix."""
        return self.image(row).dataset_picture()

    def page_scores(self, row_scores: Sequence[float], kind: str = VIDORE_SCORES) -> PageScores:
        """Each page's score from its rows' `row_scores`, as `kind` says. VIDORE_SCORES: as upstream's evaluators
        build `results` (`_get_relevant_docs_results`, `_get_retrieval_results`): the first row's score as it is,
        then each row's `max(results.get(id, 0), score)`, so a page's score is its best row's, floored at 0 unless
        the corpus's first row is one of its rows (a quirk: negative scores, such as a SigLIP dot product's, tie at
        0). RAW_SCORES: its best row's, as the model gave it."""
        scores: list[float | None] = [None] * len(self.ids)
        rows = [0] * len(self.ids)
        for row, (page, score) in enumerate(zip(self.row_pages, row_scores)):
            held = scores[page]
            floor = held if held is not None else (0.0 if kind == VIDORE_SCORES and row > 0 else None)
            if floor is None or score > floor:
                scores[page], rows[page] = score, row
            elif held is None:
                scores[page], rows[page] = floor, row
        return PageScores([float(score) for score in scores if score is not None], rows)

    def document(self, page: int, score: float | None = None, row: int | None = None) -> Document:
        """Page `page`'s Document, its image that of `row` (default: the page's first row)."""
        shown = row if row is not None else self.row_pages.index(page)
        return Document(
            id=self.ids[page], title="", text="", score=score, metadata={PAGE_INDEX: page}, image=self.image(shown)
        )


def page_corpus(data: ViDoReData) -> PageCorpus:
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
    return PageCorpus(tuple(range(len(keys))), tuple(keys), table)
