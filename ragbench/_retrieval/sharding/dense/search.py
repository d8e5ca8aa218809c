"""A dense shard's search: the queries' vectors times its rows, `dense.exact_search.inner_product_top_k`, in the blocks of the
whole corpus the unsharded search computes (its rows outside the shard zeros), so its scores are the unsharded
ones bit for bit."""

from __future__ import annotations

from typing import Any, TypedDict

import numpy as np

from ...dense.exact_search import inner_product_top_k
from ...dense.retriever import EMBEDDINGS_FILE
from ...index.damage import IndexDamage, read_array
from ..searcher import ShardSearcher, TopK


class DenseSearch(TypedDict, total=False):
    """`inner_product_top_k`'s options, where given (`ShardOptions`' chunk_rows, backend, corpus_rows)."""

    chunk_rows: int
    backend: str
    corpus_rows: int


class DenseShardSearch(ShardSearcher):
    def load(self) -> None:
        self.embeddings = read_array(self.shard.folder, EMBEDDINGS_FILE)
        if self.embeddings.ndim != 2 or self.embeddings.shape[0] != self.passages:
            raise IndexDamage(EMBEDDINGS_FILE, f"holds {self.embeddings.shape}, not {self.passages} passage rows")

    def ranked(self, payload: Any, k: int) -> TopK:
        dense: DenseSearch = {}
        for option in ("chunk_rows", "backend", "corpus_rows"):
            if option in self.options:
                dense[option] = self.options[option]
        queries = np.asarray(payload, dtype=np.float32)
        scores, ids = inner_product_top_k(queries, self.embeddings, k, first_row=self.shard.start, **dense)
        return list(zip(scores, ids))
