"""FlashRAG's refiners' view of the documents (LLMLinguaRefiner/SelectiveContextRefiner.format_reference):
one `Doc {i}(Title: {title}) {text}` line per document, the title as FlashRAG's corpus line holds it."""
from __future__ import annotations

from .._retrieval.corpus import TITLE_LINE
from .._types import Document


def reference_lines(docs: list[Document]) -> list[str]:
    return [f"Doc {i}(Title: {doc.metadata.get(TITLE_LINE, doc.title)}) {doc.text}" for i, doc in enumerate(docs, 1)]
