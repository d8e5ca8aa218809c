"""Dense retrieval's exact search: the top-k of queries' vectors times a corpus's embeddings (`inner_product_top_k`),
read block by block so memory stays bounded, scored in the same BLAS calls whether the corpus is whole or a shard (the
same bits), with numpy or faiss's brute-force `knn`."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import numpy as np

from ..._errors import ConfigError
from ..ranking import best_k

BACKENDS = ("numpy", "faiss")


def select_top_k(scores: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the k best (score, id) pairs ordered by score then smaller id (`ranking.best_k`): a total
    order, so the result does not depend on how the corpus was cut into chunks."""
    rows = [best_k(row_scores, k, row_ids) for row_scores, row_ids in zip(scores, ids)]
    return np.stack([row[0] for row in rows]), np.stack([row[1] for row in rows])


def inner_product_top_k(
    queries: np.ndarray,
    matrix: np.ndarray,
    k: int,
    chunk_rows: int = 32768,
    backend: str = "numpy",
    *,
    first_row: int = 0,
    corpus_rows: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k of `queries @ matrix.T` (ids: `matrix`'s row numbers), reading `chunk_rows` rows of `matrix`
    (e.g. a memory map of float16 embeddings) at a time, so memory stays bounded whatever the corpus size.

    `matrix` may be the rows `first_row..` of a corpus of `corpus_rows` rows (a shard): its rows are then scored
    in the blocks the whole corpus's search scores them in (its rows `n * chunk_rows ..`, zeros for the rows
    outside `matrix`), so each score is computed by the same BLAS call, of the same shape, at the same place: the
    same bits. BLAS picks its kernel and summation order by the shape (OpenBLAS scores a small block with other
    kernels), so the same row scored in a block of other rows may differ in its last bits."""
    k = min(k, len(matrix))
    corpus_rows = first_row + len(matrix) if corpus_rows is None else corpus_rows
    best_scores = np.empty((len(queries), 0), dtype=np.float32)
    best_ids = np.empty((len(queries), 0), dtype=np.int64)
    for start in range(first_row - first_row % chunk_rows, first_row + len(matrix), chunk_rows):
        begin, end = start - first_row, min(start + chunk_rows, corpus_rows) - first_row  # in `matrix`'s rows
        block = corpus_block(matrix, begin, end)
        low, high = max(0, begin), min(end, len(matrix))  # the rows of `matrix` in the block
        if backend == "faiss":
            import faiss

            wanted = min(k + len(block) - (high - low), len(block))  # the zero rows may take places
            scores, ids = faiss.knn(queries, block, wanted, metric=faiss.METRIC_INNER_PRODUCT)
            ids += begin
            scores[(ids < low) | (ids >= high)] = -np.inf
        else:
            scores = block_scores(queries, block)[:, low - begin : high - begin]
            ids = np.broadcast_to(np.arange(low, high, dtype=np.int64), scores.shape)
        best_scores, best_ids = select_top_k(
            np.concatenate([best_scores, scores], axis=1), np.concatenate([best_ids, ids], axis=1), k
        )
    return best_scores, best_ids


SCORED_ROWS = 4096  # the rows of a corpus block one BLAS call scores (`block_scores`), wherever it runs


def block_scores(queries: np.ndarray, block: np.ndarray) -> np.ndarray:
    """`queries @ block.T`, the same bits whatever the BLAS's thread count: OpenBLAS threaded splits a product
    otherwise than single-threaded, so one scored by 2 threads (this process) differs in its last bits from one
    scored by 1 (a Ray actor of one CPU, run with OMP_NUM_THREADS=1). Each `SCORED_ROWS` rows of `block` are scored
    by one single-threaded BLAS call, those calls spread over this process's cores (numpy lets go of the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    scores = np.empty((len(queries), len(block)), dtype=np.float32)

    def score(start: int) -> None:
        scores[:, start : start + SCORED_ROWS] = queries @ block[start : start + SCORED_ROWS].T

    starts = range(0, len(block), SCORED_ROWS)
    with blas_controller().limit(limits=1, user_api="blas"):
        if len(starts) == 1:
            score(0)
        else:
            with ThreadPoolExecutor(min(len(starts), os.cpu_count() or 1)) as pool:
                list(pool.map(score, starts))
    return scores


@cache
def blas_controller() -> Any:
    """threadpoolctl's view of the loaded BLAS libraries, read once: making one walks every loaded library
    (0.56 ms here, with torch loaded), which `threadpool_limits` did again for each block scored."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def corpus_block(matrix: np.ndarray, begin: int, end: int) -> np.ndarray:
    """`matrix`'s rows begin..end-1 in float32, zeros for those outside it (`begin` below 0, `end` past it)."""
    if begin >= 0 and end <= len(matrix):
        return np.asarray(matrix[begin:end], dtype=np.float32)
    block = np.zeros((end - begin, matrix.shape[1]), dtype=np.float32)
    first, last = max(0, begin), min(end, len(matrix))
    block[first - begin : last - begin] = matrix[first:last]
    return block


def checked_backend(backend: str) -> str:
    """`backend` (numpy or faiss, whose package is then needed), or a ConfigError."""
    if backend not in BACKENDS:
        raise ConfigError(f"retriever dense: backend '{backend}' is unknown; choose numpy or faiss")
    if backend == "faiss":
        try:
            import faiss  # noqa: F401
        except ImportError as exc:
            raise ConfigError("retriever dense: backend faiss needs faiss-cpu: pip install faiss-cpu") from exc
    return backend
