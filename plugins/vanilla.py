"""Retrieve-then-read over the example's provided documents, with the task's baseline prompt."""
from __future__ import annotations

from ragbench.types import Document, Example

from .closed_book import ClosedBook


class Vanilla(ClosedBook):
    """The top `top_n` provided documents, in rank order, go into the task's retrieval prompt
    (Self-RAG run_baseline_lm.py --mode retrieval; top_n defaults to its 1)."""

    name = "vanilla"

    def __init__(self, top_n: int = 1, **options) -> None:
        super().__init__(**options)
        self.top_n = int(top_n)

    def documents(self, example: Example) -> list[Document]:
        return example.docs[: self.top_n]
