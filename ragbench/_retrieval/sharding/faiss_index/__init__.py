"""faiss_index's sharding (FlashRAG's faiss file, checked as read, `foreign`; no shard-parallel build): its split
(`split`), its run-side front (`front`), its shard search (`search`)."""

from __future__ import annotations

from ..kind import Splits
from .front import FaissQueries
from .search import FaissShardSearch
from .split import faiss_file, split_faiss


class FaissKind(Splits):
    name = "faiss_index"
    front = FaissQueries
    search = FaissShardSearch
    split = staticmethod(split_faiss)
    foreign = staticmethod(faiss_file)


KIND = FaissKind()
