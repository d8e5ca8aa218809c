"""dense: its split (`split`), its run-side front (`front`), its shard search (`search`), its shard build (`build`),
its blocks in a merged parallel build (`blocks`)."""

from __future__ import annotations

from ...dense.retriever import DenseRetriever
from ..kind import ShardedKind
from .blocks import DenseBlocks
from .build import DenseShards
from .front import DenseQueries
from .search import DenseShardSearch
from .split import split_dense

KIND = ShardedKind(
    "dense",
    DenseQueries,
    DenseShardSearch,
    split=split_dense,
    checked=DenseRetriever,
    build=DenseShards,
    blocks=DenseBlocks(),
)
