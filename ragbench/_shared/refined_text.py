"""A refiner's text in place of the documents (`--refiner`, ragbench._components): one document marked
`REFINED_TEXT`, which a prompt shows as it is (FlashRAG's `formatted_reference`) and a reader does not
keep as the sample's documents."""

from __future__ import annotations

from .._types import Document

# The metadata key of the one document that holds a refiner's text made of the documents
REFINED_TEXT = "refined_text"


def is_refined_text(docs: list[Document] | None) -> bool:
    """Whether `docs` is a refiner's text in place of the documents (one document marked `REFINED_TEXT`)."""
    return docs is not None and len(docs) == 1 and bool(docs[0].metadata.get(REFINED_TEXT))
