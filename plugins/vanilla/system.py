"""Retrieve-then-read with the task's baseline prompt."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from annotated_types import Ge

from ragbench.api import Context, Document, Example, Reader


class Vanilla(Reader):
    """The top `top_n` documents, in rank order, go into the task's retrieval prompt (Self-RAG
    run_baseline_lm.py --mode retrieval; top_n defaults to its 1).

    Documents come from the run's retriever: by default `provided`, the example's own documents
    in their given order; with `--retriever bm25|dense --retriever-arg index=DIR` the question is
    searched there (the BM25/dense baseline of LLatrieval's Table 1, under the same retriever).
    """

    name = "vanilla"
    declares = dataclasses.replace(
        Reader.declares,
        retrieves=True,
        budget_options={"passages": "top_n"},
    )

    def __init__(self, top_n: Annotated[int, Ge(1)] = 1, **options: Any) -> None:
        super().__init__(**options)
        self.top_n = int(top_n)

    async def documents(self, example: Example, ctx: Context) -> list[Document]:
        if ctx.retriever is None:  # a Context built outside a run
            return example.docs[: self.top_n]
        return await ctx.retriever.search(example.question, self.top_n)
