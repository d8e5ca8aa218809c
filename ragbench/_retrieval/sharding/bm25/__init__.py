"""bm25: its split (`split`), its run-side front (`front`), its shard search (`search`), its shard build (`build`),
its blocks in a merged parallel build (`blocks`)."""

from __future__ import annotations

from ...bm25.retriever import BM25Retriever
from ..kind import ShardedKind
from .blocks import Bm25Blocks
from .build import Bm25Shards
from .front import Bm25Queries
from .search import Bm25ShardSearch
from .split import split_bm25

KIND = ShardedKind(
    "bm25", Bm25Queries, Bm25ShardSearch, split=split_bm25, checked=BM25Retriever, build=Bm25Shards, blocks=Bm25Blocks()
)
