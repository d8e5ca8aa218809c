"""faiss_index (FlashRAG's faiss file, checked as read; no shard-parallel build): its split (`split`), its run-side
front (`front`), its shard search (`search`)."""

from __future__ import annotations

from ..kind import ShardedKind
from .front import FaissQueries
from .search import FaissShardSearch
from .split import faiss_file, split_faiss

KIND = ShardedKind("faiss_index", FaissQueries, FaissShardSearch, split=split_faiss, foreign=faiss_file)
