"""Late-interaction (MaxSim) scores as colpali-engine's `BaseVisualRetrieverProcessor.score_multi_vector` computes
them.

Upstream pads each block of `batch_size` queries and each block of `batch_size` pages with zero vectors to the
block's longest, scores `einsum("bnd,csd->bcns")`, takes each query token's max over the page's tokens and sums
over the query's tokens, in the embeddings' dtype, then casts to float32. The zero padding is part of the score:
a query token whose every similarity with a page is negative takes 0 from a padding vector where the page is
shorter than the longest of its block, its own best otherwise. ragbench computes the same blocks the same way,
so a page's score is upstream's to the bit (tests/retrieval/test_pages_maxsim.py pins it to values from running
colpali-engine 0.3.18).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SCORE_BATCH = 128  # score_multi_vector's default batch_size


def maxsim_scores(
    queries: Sequence[Any], pages: Sequence[Any], batch_size: int = SCORE_BATCH, device: str = "cpu"
) -> Any:
    """(n_queries, n_pages) float32 scores of multi-vector `queries` against `pages` (each a (tokens, dim)
    tensor), on `device`, returned on the CPU."""
    import torch
    from torch.nn.utils.rnn import pad_sequence

    if not queries or not pages:
        raise ValueError("late-interaction scores need at least one query and one page")
    rows = []
    for i in range(0, len(queries), batch_size):
        block = pad_sequence(list(queries[i : i + batch_size]), batch_first=True, padding_value=0).to(device)
        columns = []
        for j in range(0, len(pages), batch_size):
            pages_block = pad_sequence(list(pages[j : j + batch_size]), batch_first=True, padding_value=0).to(device)
            columns.append(torch.einsum("bnd,csd->bcns", block, pages_block).max(dim=3)[0].sum(dim=2))
        rows.append(torch.cat(columns, dim=1).cpu())
    return torch.cat(rows, dim=0).to(torch.float32)
