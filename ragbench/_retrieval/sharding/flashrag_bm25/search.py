"""A flashrag_bm25 shard's search: the queries' words, scored as FlashRAG's bm25s scores them; it answers with
every passage its numba heap of k ever took (`numba_top_k.pushed`), from which the run replays the whole corpus's
heap (`sharding.merge.merge_numba_top_k`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...bm25.bm25s_files import read_bm25s_index
from ...bm25.flashrag import word_scores
from ...bm25.numba_top_k import pushed
from ..searcher import ShardSearcher, TopK, empty


class FlashRagShardSearch(ShardSearcher):
    def load(self) -> None:
        files = read_bm25s_index(self.shard.folder, mmap=bool(self.options.get("mmap", True)))
        self.expect("params.index.json", files.passages)
        self.vocab, self.data, self.indices, self.indptr = files.vocab, files.data, files.indices, files.indptr

    def ranked(self, payload: Any, k: int) -> TopK:
        return [self.flashrag_pushed(words, k) for words in payload]

    def flashrag_pushed(self, words: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Its passages' scores as `FlashRagBM25Retriever.scores` adds them, and those its numba heap took."""
        if not words:
            return empty()
        scores = word_scores(words, self, self.passages)
        places = pushed(scores, k)
        return scores[places], places
