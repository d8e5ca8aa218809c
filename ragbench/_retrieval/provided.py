"""`provided`: the example's own documents (CRAG pages, ALCE top-100, Self-RAG ctxs), in their
given order - the first k, whatever the query. The default retriever of a run.

`none`: no documents for any query. A system that retrieves runs without documents on purpose with it:
the pre-flight refuses `provided` (or `example_bm25`, `example_dense`) on a task whose examples carry
no documents, where the system would answer closed book under its own name without anyone asking."""

from __future__ import annotations

from .._types import Document, Example
from .._values.images import Image
from .base import RetrievalError, Retriever


class ExampleDocs(Retriever):
    """One example's documents."""

    name = "provided"
    fixed_documents = True

    def __init__(self, docs: list[Document]) -> None:
        self.docs = docs

    def search(self, queries: list[str], k: int) -> list[list[Document]]:
        return [list(self.docs[:k]) for _ in queries]


class ProvidedRetriever(Retriever):
    name = "provided"
    fixed_documents = True
    example_documents_only = True

    def for_example(self, example: Example) -> Retriever:
        return ExampleDocs(example.docs)

    def search(self, queries: list[str], k: int) -> list[list[Document]]:
        raise RetrievalError(
            "the provided retriever has no corpus of its own: it answers for one example, through ctx.retriever"
        )


class NoRetriever(Retriever):
    """Every search finds nothing (each example answers from no documents)."""

    name = "none"
    fixed_documents = True  # every query gets the same documents: none
    image_queries = True  # a search by picture finds nothing too

    def search(self, queries: list[str], k: int) -> list[list[Document]]:
        return [[] for _ in queries]

    def search_images(self, images: list[Image], k: int) -> list[list[Document]]:
        return [[] for _ in images]
