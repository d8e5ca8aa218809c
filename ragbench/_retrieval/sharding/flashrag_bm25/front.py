"""FlashRAG's bm25 index's run-side front over its shards (`sharding.fronts`): its query side, the same over a split
index (`FlashRagQueries`) and over shards it was built in (`build.FlashRagShardsFront`)."""

from __future__ import annotations

from typing import Any

from ...bm25.flashrag import FlashRagBM25Retriever, query_words
from ..fronts import Answers, SplitLayout, per_query
from ..merge import merge_numba_top_k
from ..searcher import ShardOptions, TopK


class FlashRagQuerySide:
    """FlashRAG's bm25 query side, one for both ways its shards are made: its query words as a batch's payload, and
    the hits of the corpus's rows (`FlashRagBM25Retriever.answer`) from FlashRAG's numba heap replayed over the
    shards' candidates."""

    stopwords: Any
    answer: Any  # FlashRagBM25Retriever.answer, of the front this side is mixed into

    def payload(self, queries: list[str]) -> Any:
        return [query_words(query, self.stopwords) for query in queries]

    def answers(self, queries: list[str], answers: list[TopK], k: int) -> Answers:
        return [
            self.answer(query, lambda _, q=q: merge_numba_top_k(per_query(answers, q), k))
            for q, query in enumerate(queries)
        ]


class FlashRagQueries(FlashRagQuerySide, SplitLayout, FlashRagBM25Retriever):
    """FlashRAG's bm25 over a split index: the corpus rows; the shards hold the score matrix (this process checks
    the index's files memory-mapped, as the unsharded retriever does, and keeps its vocabulary)."""

    def shard_options(self) -> ShardOptions:
        return {"mmap": True}
