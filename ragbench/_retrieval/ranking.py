"""The k best of one query's scored passages, in a total order: score, then smaller passage number.

The same whatever numpy's selection algorithm, the corpus's cut into chunks (dense) or bm25s's top-k
backend (JAX's when it is importable, numpy's argpartition else: each orders tied passages its own way,
so a run's BM25 hits and numbers changed with what happened to be installed). Lucene, which pyserini's
BM25 searches with, breaks ties the same way: by document number.
"""

from __future__ import annotations

import numpy as np


def best_k(scores: np.ndarray, k: int, ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The `k` best (score, id) pairs of `scores`, best first, ties by smaller id (`ids`: the passage numbers
    of `scores`, their positions when None). Ties at the k-th score are picked without sorting them all: a BM25
    query that matches few passages ties the rest of the corpus at 0."""
    k = max(0, min(k, len(scores)))
    if k == 0:
        return scores[:0], np.zeros(0, dtype=np.int64)
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    above = np.flatnonzero(scores > kth)
    tied = np.flatnonzero(scores == kth)
    wanted = k - len(above)
    if len(tied) > wanted:  # `tied` is in position order: its first are the smaller ids when ids are positions
        tied = tied[np.argsort(ids[tied], kind="stable")[:wanted]] if ids is not None else tied[:wanted]
    chosen = np.concatenate([above, tied])
    chosen_ids = chosen if ids is None else ids[chosen]
    order = np.lexsort((chosen_ids, -scores[chosen]))
    return scores[chosen][order], chosen_ids[order].astype(np.int64, copy=False)
