"""The LLM alone, prompted with the task's own baseline prompt."""

from __future__ import annotations

from ragbench.api import Context, Document, Example, Reader


class ClosedBook(Reader):
    """One generation per example over no documents (options: ragbench._shared.reader.Reader)."""

    name = "closed_book"

    async def documents(self, example: Example, ctx: Context) -> list[Document] | None:
        return None  # closed book: no documents at all
