"""A tevatron_dense shard's search: its Tevatron shard files in one flat index, each query searched alone, as the
unsharded search searches."""

from __future__ import annotations

from typing import Any

from ..searcher import ShardSearcher, TopK, empty, faiss_rows


class TevatronShardSearch(ShardSearcher):
    def load(self) -> None:
        from ...dense.tevatron import flat_index

        self.index, docids = flat_index(list(self.shard.files))
        self.expect(str(self.shard.folder), len(docids))

    def ranked(self, payload: Any, k: int) -> TopK:
        return [faiss_rows(*self.index.search(vector[None, :], k))[0] if k else empty() for vector in payload]
