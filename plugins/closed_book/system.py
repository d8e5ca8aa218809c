"""The LLM alone, prompted with the task's own baseline prompt."""
from __future__ import annotations

from ragbench.context import Context
from ragbench.shared.reader import Reader
from ragbench.types import Document, Example


class ClosedBook(Reader):
    """One generation per example over no documents (options: ragbench.shared.reader.Reader)."""

    name = "closed_book"

    async def documents(self, example: Example, ctx: Context) -> list[Document] | None:
        return None  # closed book: no documents at all
