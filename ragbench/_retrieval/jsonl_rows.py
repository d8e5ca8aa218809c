"""A JSONL corpus read by row number, as FlashRAG reads it: `datasets.load_dataset("json", ...)` numbers the
lines that hold something other than whitespace (blank lines are skipped), and a faiss index FlashRAG built
answers with those numbers.

Opening scans the file once for where each row starts (numpy over a memory map, 8 bytes a row: 170 MB for
21M passages); a row is parsed only when a search returns it.
"""
from __future__ import annotations

import json
import mmap
from pathlib import Path

import numpy as np

from .._errors import RecordError
from .._types import Document
from .corpus import jsonl_document

BLOCK_BYTES = 8 << 20
WHITESPACE = np.array([ord(" "), ord("\t"), ord("\r"), ord("\n")], dtype=np.uint8)  # what a JSON reader skips


def row_starts(data: bytes | mmap.mmap, block_bytes: int = BLOCK_BYTES) -> np.ndarray:
    """The byte offset of every line of `data` that holds a non-whitespace byte, in order (int64)."""
    found: list[np.ndarray] = []
    line_start, line_filled = 0, False  # the line running into the next block, and whether it holds text so far
    for block_start in range(0, len(data), block_bytes):
        block = np.frombuffer(data, dtype=np.uint8, count=min(block_bytes, len(data) - block_start), offset=block_start)
        filled = ~np.isin(block, WHITESPACE)
        ends = np.flatnonzero(block == ord("\n"))
        if len(ends) == 0:
            line_filled = line_filled or bool(filled.any())
            continue
        counts = np.concatenate([[0], np.cumsum(filled, dtype=np.int64)])
        starts = np.concatenate([[0], ends[:-1] + 1])
        holds_text = counts[ends] > counts[starts]
        holds_text[0] |= line_filled
        starts = starts + block_start
        starts[0] = line_start
        found.append(starts[holds_text])
        line_start, line_filled = block_start + int(ends[-1]) + 1, bool(filled[ends[-1] + 1:].any())
    if line_filled:  # the last line, without a newline
        found.append(np.array([line_start], dtype=np.int64))
    return np.concatenate(found).astype(np.int64, copy=False) if found else np.zeros(0, dtype=np.int64)


class JsonlRows:
    """Row `i` of a JSONL corpus as a Document (`corpus.jsonl_document`: FlashRAG's `{"id", "contents"}` with the
    title on the first line, or `{"id", "title", "text"}`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle = open(path, "rb")
        size = path.stat().st_size
        self.data = mmap.mmap(self.handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self.starts = row_starts(self.data)

    def __len__(self) -> int:
        return len(self.starts)

    def line(self, row: int) -> bytes:
        start = int(self.starts[row])
        end = self.data.find(b"\n", start)
        return self.data[start: end if end >= 0 else len(self.data)]

    def get(self, row: int, score: float | None = None) -> Document:
        """Row `row`'s passage; a row that is not a passage is a RecordError naming the file and the row."""
        try:
            record = json.loads(self.line(row))
            if not isinstance(record, dict):
                raise ValueError(f"a JSON {type(record).__name__}, not an object")
            doc = jsonl_document(record, str(self.path), row + 1)
        except RecordError as exc:  # named by row, the number the index gives, not by line
            message = str(exc).split(": ", 1)[-1]
            raise RecordError(str(self.path), row + 1, message, exc.field, at=f"row {row}") from None
        except ValueError as exc:  # not JSON, or bytes that are not UTF-8
            raise RecordError(str(self.path), row + 1, f"not a JSON passage ({exc})", at=f"row {row}") from None
        doc.score = score
        return doc

    def close(self) -> None:
        if isinstance(self.data, mmap.mmap):
            self.data.close()
        self.handle.close()
