"""FlashRAG's faiss index's run-side front over its shards (`sharding.fronts`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...dense.faiss_index import FaissIndexRetriever
from ..fronts import Answers, SplitLayout, per_query
from ..merge import merge_top_k
from ..searcher import ShardOptions, TopK


class FaissQueries(SplitLayout, FaissIndexRetriever):
    """FlashRAG's faiss query side: the encoder, the corpus rows, the index file memory-mapped (its header and
    vector 0, to check the encoder); the shards hold the vectors."""

    def read_index(self, mmap: bool) -> Any:
        self.mmap = mmap  # the shards' (`mmap=`: their vectors left on disk); this process maps the index
        return super().read_index(True)

    def payload(self, queries: list[str]) -> Any:
        return self.encoder.encode(queries, is_query=True) if queries else np.zeros((0, self.index.d), np.float32)

    def shard_options(self) -> ShardOptions:
        return {"mmap": self.mmap}

    def answers(self, queries: list[str], answers: list[TopK], k: int) -> Answers:
        merged = [merge_top_k(per_query(answers, query), k) for query in range(len(queries))]
        return self.documents([ids for _, ids in merged], [scores for scores, _ in merged])

    def split_source(self) -> Path:
        return self.index_path
