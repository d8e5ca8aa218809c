"""A bm25 shard's search: the queries' tokens, scored by bm25s over its postings, `bm25.bm25_top_k`."""

from __future__ import annotations

from typing import Any

from ...bm25.bm25s_files import read_bm25s_index
from ...bm25.retriever import BM25_DIR, bm25_top_k, import_bm25s
from ..searcher import ShardSearcher, TopK


class Bm25ShardSearch(ShardSearcher):
    def load(self) -> None:
        files = read_bm25s_index(self.shard.folder / BM25_DIR, prefix=f"{BM25_DIR}/")
        self.expect(f"{BM25_DIR}/params.index.json", files.passages)
        self.bm25 = import_bm25s().BM25.load(self.shard.folder / BM25_DIR, mmap=bool(self.options.get("mmap", True)))

    def ranked(self, payload: Any, k: int) -> TopK:
        return [bm25_top_k(self.bm25, tokens, k) for tokens in payload]
