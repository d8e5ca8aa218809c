"""A FlashRAG faiss index split into shards (`sharding.split.split_index`): one flat inner-product index a shard, holding
the vectors of its passages, as faiss stored them.

Only a flat inner-product index (FlashRAG's `Flat`: `IndexFlatIP`, or `IndexFlat` of that metric) is split: its
search is exact, each vector's score the same inner product in a shard as in the whole index. An approximate index
(IVF, HNSW, PQ ...) is refused: each shard's approximate search (its own lists, graph or codes) merged is not what
one such index answers, so the answers would differ without a bound.
"""

from __future__ import annotations

from pathlib import Path

from ...._errors import ConfigError
from ...dense.faiss_index import index_header

SHARD_FILE = "shard.index"
BLOCK = 1 << 16  # vectors copied at a time


def faiss_file(index: Path) -> int | None:
    """The vector count of FlashRAG's faiss index file `index` (None: `index` is no file)."""
    return index_header(index)[1] if index.is_file() else None


def split_faiss(index: Path, folders: list[Path], ranges: list[tuple[int, int]]) -> None:
    import faiss

    try:
        whole = faiss.read_index(str(index), faiss.IO_FLAG_MMAP_IFC)
    except RuntimeError as exc:  # a header intact, the rest cut short or garbled: faiss's C++ error, many lines
        cause = (str(exc).strip().splitlines() or [type(exc).__name__])[0].rpartition("Error: ")[2]
        cause = cause.rsplit(" (", 1)[0] if cause.endswith(")") else cause  # a stale errno's text: no file is missing
        raise ConfigError(
            f"index shard: {index} is damaged (faiss cannot read it: {cause}); build it again, or copy it again "
            "from where it was built"
        ) from None
    if not isinstance(whole, faiss.IndexFlat) or whole.metric_type != faiss.METRIC_INNER_PRODUCT:
        metric = "inner product" if whole.metric_type == faiss.METRIC_INNER_PRODUCT else "another metric"
        raise ConfigError(
            f"index shard: {index} is a {type(whole).__name__} ({metric}); only flat inner-product faiss indexes "
            "(FlashRAG's Flat) are sharded: an approximate index's shards searched apart and merged do not answer "
            "as the whole index; build a Flat index to shard it, or search this one unsharded"
        )
    for folder, (start, stop) in zip(folders, ranges):
        shard = faiss.IndexFlatIP(whole.d)
        for first in range(start, stop, BLOCK):
            shard.add(whole.reconstruct_n(first, min(stop, first + BLOCK) - first))
        faiss.write_index(shard, str(folder / SHARD_FILE))
