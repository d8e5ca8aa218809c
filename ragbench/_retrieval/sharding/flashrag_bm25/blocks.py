"""flashrag_bm25's blocks in a merged parallel build: bm25's (`bm25.blocks`), FlashRAG's language picked first by
the corpus's first indexed text, as its one-process build picks it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...bm25.flashrag import FlashRagBM25Builder
from ..bm25.blocks import Bm25Blocks
from ..merged_build.analysis import WorkerSettings

if TYPE_CHECKING:
    from ...._registry import Registry


class FlashRagBlocks(Bm25Blocks):
    def settings(self, builder: FlashRagBM25Builder, first: str, registry: Registry) -> WorkerSettings:
        builder.choose_language(first)
        return super().settings(builder, first, registry)
