"""Pages encoded as the one-process index build encodes them: `batch_size` pages a forward pass, each batch's
vectors pooled by colpali-engine's pooler where asked (`pool_factor`); a shard of a sharded build encodes its
pages so too (`shards`)."""

from __future__ import annotations

from typing import Any

from ..._imports import import_extra
from .corpus import PageCorpus

INSTALL = "pip install 'ragbench[vision]'"


def encoded_pages(
    corpus: PageCorpus, encoder: Any, start: int, stop: int, batch_size: int, pool_factor: int
) -> list[Any]:
    """The vectors of pages start..stop-1, encoded `batch_size` pages at a time from `start` and pooled by the batch."""
    vectors: list[Any] = []
    for first in range(start, stop, batch_size):
        images = [corpus.decoded(i) for i in range(first, min(first + batch_size, stop))]
        vectors.extend(pooled(encoder.encode_pages(images), pool_factor))
    return vectors


def pooled(pages: list[Any], pool_factor: int) -> list[Any]:
    """Each page's vectors pooled by colpali-engine's HierarchicalTokenPooler (`pool_factor` 1: as they are)."""
    if pool_factor == 1:
        return pages
    pooling = import_extra("colpali_engine.compression.token_pooling", f"token pooling is colpali-engine's: {INSTALL}")
    return list(pooling.HierarchicalTokenPooler().pool_embeddings(pages, pool_factor=pool_factor))
