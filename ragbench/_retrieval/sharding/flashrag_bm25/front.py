"""FlashRAG's bm25 index's run-side front over its shards (`sharding.fronts`)."""

from __future__ import annotations

from typing import Any

from ...bm25.flashrag import FlashRagBM25Retriever, query_words
from ..fronts import Answers, SplitLayout, per_query
from ..merge import merge_numba_top_k
from ..searcher import ShardOptions, TopK


class FlashRagQueries(SplitLayout, FlashRagBM25Retriever):
    """FlashRAG's bm25 query side: its words, the corpus rows; the shards hold the score matrix (this process
    checks the index's files memory-mapped, as the unsharded retriever does, and keeps its vocabulary)."""

    def payload(self, queries: list[str]) -> Any:
        return [query_words(query, self.stopwords) for query in queries]

    def shard_options(self) -> ShardOptions:
        return {"mmap": True}

    def answers(self, queries: list[str], answers: list[TopK], k: int) -> Answers:
        return [
            self.answer(query, lambda _, q=q: merge_numba_top_k(per_query(answers, q), k))  # type: ignore[misc]
            for q, query in enumerate(queries)
        ]
