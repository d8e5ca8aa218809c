"""A FlashRAG bm25s folder split into shards (`sharded.split.split_index`), as bm25's bm25s files are."""

from __future__ import annotations

from pathlib import Path

from ..bm25.split import split_bm25s


def split_flashrag_bm25(index: Path, folders: list[Path], ranges: list[tuple[int, int]]) -> None:
    split_bm25s(index, folders, ranges)  # FlashRAG's bm25s files lie at the top of its folder
