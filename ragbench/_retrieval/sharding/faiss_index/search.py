"""A faiss_index shard's search: the queries' vectors searched in its flat index (`split`), the batch at once, as
the unsharded search does."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...index.damage import IndexDamage
from ..searcher import ShardSearcher, TopK, faiss_rows
from .split import SHARD_FILE


class FaissShardSearch(ShardSearcher):
    def load(self) -> None:
        import faiss

        path = self.shard.folder / SHARD_FILE
        if not path.is_file():
            raise IndexDamage(SHARD_FILE, "is missing")
        try:
            self.index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC if self.options.get("mmap") else 0)
        except RuntimeError as exc:
            raise IndexDamage(SHARD_FILE, f"could not be read ({(str(exc).strip().splitlines() or [''])[0]})") from None
        self.expect(SHARD_FILE, int(self.index.ntotal))

    def ranked(self, payload: Any, k: int) -> TopK:
        ranked = faiss_rows(*self.index.search(np.asarray(payload, dtype=np.float32), k)) if k else []
        return ranked or [(np.zeros(0, np.float32), np.zeros(0, np.int64)) for _ in payload]
