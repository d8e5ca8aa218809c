"""One shard's search, in the process that serves it (a Ray actor, `actors`; tests call it directly).

It loads only its shard's files and answers a batch with each query's top k among its passages, numbered in the
whole corpus, in the unsharded retriever's order (`ranking.best_k`) and with its scores:
- dense: the queries' vectors (encoded once by the run) times its rows, `dense.inner_product_top_k`;
- bm25: the queries' tokens (tokenized once by the run), scored by bm25s over its postings, `bm25.bm25_top_k`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..bm25 import BM25_DIR, bm25_top_k, import_bm25s
from ..bm25s_files import read_bm25s_index
from ..dense import EMBEDDINGS_FILE, inner_product_top_k
from ..index_damage import IndexDamage, read_array
from .layout import Shard

TopK = list[tuple[np.ndarray, np.ndarray]]  # a query's (scores, passage numbers), best first


class ShardSearcher:
    """Shard `shard` of a `kind` index; `options` the search's own (dense: chunk_rows, backend; bm25: mmap)."""

    def __init__(self, kind: str, shard: Shard, options: dict[str, Any]) -> None:
        self.kind, self.shard, self.options = kind, shard, options
        passages = shard.stop - shard.start
        if kind == "dense":
            self.embeddings = read_array(shard.folder, EMBEDDINGS_FILE)
            if self.embeddings.ndim != 2 or self.embeddings.shape[0] != passages:
                raise IndexDamage(EMBEDDINGS_FILE, f"holds {self.embeddings.shape}, not {passages} passage rows")
        elif kind == "bm25":
            files = read_bm25s_index(shard.folder / BM25_DIR, prefix=f"{BM25_DIR}/")
            if files.passages != passages:
                raise IndexDamage(f"{BM25_DIR}/params.index.json", f"holds {files.passages} passages, not {passages}")
            self.bm25 = import_bm25s().BM25.load(shard.folder / BM25_DIR, mmap=bool(options.get("mmap", True)))
        else:
            raise ValueError(f"no shard search for {kind} indexes")

    def top_k(self, payload: Any, k: int) -> TopK:
        """Each query's top `k` of this shard, passages numbered in the whole corpus."""
        if self.kind == "dense":
            options = {key: self.options[key] for key in ("chunk_rows", "backend") if key in self.options}
            scores, ids = inner_product_top_k(np.asarray(payload, dtype=np.float32), self.embeddings, k, **options)
            return [(row_scores, row_ids + self.shard.start) for row_scores, row_ids in zip(scores, ids)]
        ranked = [bm25_top_k(self.bm25, tokens, k) for tokens in payload]
        return [(scores, ids + self.shard.start) for scores, ids in ranked]
