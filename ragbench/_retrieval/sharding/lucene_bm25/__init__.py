"""lucene_bm25: its split (`split`), its run-side front (`front`), its shard search (`search`), its shard build
(`build`), its blocks in a merged parallel build (`blocks`)."""

from __future__ import annotations

from ...lucene.retriever import LuceneBM25Retriever
from ..kind import ShardedKind
from .blocks import LuceneBlocks
from .build import LuceneShards
from .front import LuceneQueries
from .search import LuceneShardSearch
from .split import split_lucene

KIND = ShardedKind(
    "lucene_bm25",
    LuceneQueries,
    LuceneShardSearch,
    split=split_lucene,
    checked=LuceneBM25Retriever,
    build=LuceneShards,
    blocks=LuceneBlocks(),
)
