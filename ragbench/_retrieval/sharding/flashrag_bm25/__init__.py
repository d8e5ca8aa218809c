"""flashrag_bm25 (FlashRAG's bm25s index, no manifest: checked as read): its split (`split`), its run-side front
(`front`), its shard search (`search`), its shard build (`build`), its
blocks in a merged parallel build (`blocks`)."""

from __future__ import annotations

from ..kind import ShardedKind
from .blocks import FlashRagBlocks
from .build import FlashRagShards
from .front import FlashRagQueries
from .search import FlashRagShardSearch
from .split import bm25s_folder, split_flashrag_bm25

KIND = ShardedKind(
    "flashrag_bm25",
    FlashRagQueries,
    FlashRagShardSearch,
    split=split_flashrag_bm25,
    foreign=bm25s_folder,
    build=FlashRagShards,
    blocks=FlashRagBlocks(),
)
