"""A FlashRAG bm25s folder split into shards (`sharding.split.split_index`), as bm25's bm25s files are."""

from __future__ import annotations

from pathlib import Path

from ...bm25.bm25s_files import PARAMS, read_bm25s_index
from ...index.staging import MANIFEST_FILE
from ..bm25.split import split_bm25s


def split_flashrag_bm25(index: Path, folders: list[Path], ranges: list[tuple[int, int]]) -> None:
    split_bm25s(index, folders, ranges)  # FlashRAG's bm25s files lie at the top of its folder


def bm25s_folder(index: Path) -> int | None:
    """The passage count of FlashRAG's bm25s folder `index` (None: not one: no params, or a ragbench manifest)."""
    if (index / PARAMS).is_file() and not (index / MANIFEST_FILE).is_file():
        return read_bm25s_index(index).passages
    return None
