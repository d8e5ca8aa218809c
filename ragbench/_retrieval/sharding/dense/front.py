"""The dense index's run-side front over its shards (`sharding.fronts`)."""

from __future__ import annotations

from typing import Any

from ...dense.retriever import DenseRetriever
from ..fronts import MergedHits
from ..searcher import ShardOptions


class DenseQueries(MergedHits, DenseRetriever):
    """The dense index's query side: the encoder, the docs store; the shards hold the rows."""

    def payload(self, queries: list[str]) -> Any:
        return self.encoder.encode_queries(queries)

    def shard_options(self) -> ShardOptions:
        return {"chunk_rows": self.chunk_rows, "backend": self.backend, "corpus_rows": self.manifest.doc_count}
