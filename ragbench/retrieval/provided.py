"""`provided`: the example's own documents (CRAG pages, ALCE top-100, Self-RAG ctxs), in their
given order - the first k, whatever the query. The default retriever of a run."""
from __future__ import annotations

from ..types import Document, Example
from .base import Retriever, RetrievalError


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

    def for_example(self, example: Example) -> Retriever:
        return ExampleDocs(example.docs)

    def search(self, queries: list[str], k: int) -> list[list[Document]]:
        raise RetrievalError("the provided retriever has no corpus of its own: it answers for one example, "
                             "through ctx.retriever")
