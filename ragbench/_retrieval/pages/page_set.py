"""A page corpus's rows as its pages: each page once, each row's page, each page's score as vidore-benchmark's
evaluators make it from its rows' scores (`page_scores`), and a page's `Document`.

Upstream scores every row, and its `results` keep one score a page id: rows sharing an id are one page, scored by
its best row. A page's Document shows the image of the row that gave its score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..._types import Document
from ..._values.images import Image
from .corpus import PageCorpus
from .ranking import PAGE_INDEX

VIDORE_SCORES = "vidore"  # a page's score as upstream's `results` make it: its best row's, floored at 0 (below)
RAW_SCORES = "raw"  # a page's best row's score as the model gave it


@dataclass(frozen=True)
class PageScores:
    """One query's pages: `scores[p]` the score of page `ids[p]`, given by its row `rows[p]` (an index of the
    corpus's rows)."""

    scores: list[float]
    rows: list[int]


class PageSet:
    """The pages of `corpus`'s rows: `ids` each page once, in the order of the rows first holding it (upstream's
    `results` order), `row_pages` each row's page (an index of `ids`). `len` is the rows'."""

    def __init__(self, corpus: PageCorpus) -> None:
        self.corpus = corpus
        row_ids = tuple(corpus.row_ids)
        places = {key: place for place, key in enumerate(dict.fromkeys(row_ids))}
        self.ids: tuple[str, ...] = tuple(places)
        self.row_pages: tuple[int, ...] = tuple(places[key] for key in row_ids)

    def __len__(self) -> int:
        return len(self.row_pages)

    def image(self, row: int) -> Image:
        return self.corpus.image(row)

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
