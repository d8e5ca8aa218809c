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

from ..._errors import RecordError
from ..._types import Document
from ..._values.json_values import JsonObject
from .readers import jsonl_document, row_error

BLOCK_BYTES = 8 << 20
WHITESPACE = np.array([ord(" "), ord("\t"), ord("\r"), ord("\n")], dtype=np.uint8)  # what a JSON reader skips


def row_starts(data: bytes | mmap.mmap, block_bytes: int = BLOCK_BYTES) -> np.ndarray:
    """The byte offset of every line of `data` that holds a non-whitespace byte, in order (int64). A line is
    looked at byte by byte only when it starts with whitespace (a JSONL row starts with `{`)."""
    size = len(data)
    if size == 0:
        return np.zeros(0, dtype=np.int64)
    everything = np.frombuffer(data, dtype=np.uint8)
    found: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]  # the first line starts at 0
    for block_start in range(0, size, block_bytes):
        block = everything[block_start : block_start + block_bytes]
        starts = np.flatnonzero(block == ord("\n")).astype(np.int64) + (block_start + 1)
        found.append(starts[starts < size])
    starts = np.concatenate(found)
    doubtful = np.flatnonzero(np.isin(everything[starts], WHITESPACE))
    if len(doubtful):
        blank = [number for number in doubtful.tolist() if not line_at(data, int(starts[number])).strip(b" \t\r")]
        starts = np.delete(starts, blank)
    return starts


def line_at(data: bytes | mmap.mmap, start: int) -> bytes:
    """The line that starts at byte `start`, without its newline."""
    end = data.find(b"\n", start)
    return data[start : end if end >= 0 else len(data)]


class JsonlRows:
    """Row `i` of a JSONL corpus as a Document (`corpus.jsonl_document`: FlashRAG's `{"id", "contents"}` with the
    title on the first line, or `{"id", "title", "text"}`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle = open(path, "rb")  # noqa: SIM115 (held open, closed by close())
        size = path.stat().st_size
        self.data = mmap.mmap(self.handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self.starts = row_starts(self.data)

    def __len__(self) -> int:
        return len(self.starts)

    def record(self, row: int) -> JsonObject:
        """Row `row` as its JSON object; a RecordError naming the file and the row when it is none."""
        try:
            record = json.loads(line_at(self.data, int(self.starts[row])))
        except ValueError as exc:  # not JSON, or bytes that are not UTF-8
            raise RecordError(str(self.path), row + 1, f"not a JSON passage ({exc})", at=f"row {row}") from None
        if not isinstance(record, dict):
            raise RecordError(
                str(self.path), row + 1, f"a JSON {type(record).__name__}, not a passage object", at=f"row {row}"
            )
        return record

    def get(self, row: int, score: float | None = None) -> Document:
        """Row `row`'s passage; a row that is not a passage is a RecordError naming the file and the row."""
        record = self.record(row)
        try:
            doc = jsonl_document(record, str(self.path), row + 1)
        except RecordError as exc:  # named by row, the number the index gives, not by line
            raise row_error(exc, row) from None
        doc.score = score
        return doc

    def close(self) -> None:
        if isinstance(self.data, mmap.mmap):
            self.data.close()
        self.handle.close()
