"""A docs store (`docstore`) in an object store, read where it lies: a passage is two ranged reads, its two
offsets (in their block of docs.offsets.npy) and then its line of docs.jsonl (in its blocks); neither file is ever
fetched whole. Each block read is checked by content against the digests the build recorded beside them
(`BLOCKS_FILE`, `block_digests`): a store written over with other passages, of the same size or not, fails the
search that reads it, never shows them. Opening it reads the offsets' .npy header and last offset, and checks them
against the passages it must hold and the size of docs.jsonl, as `check_docstore` checks a local store."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from ..._storage.block_digests import BlockMismatch, CheckedRanges, block_record, recorded_ranges
from ..._storage.locations import joined
from ..._types import Document
from ..base import RetrievalError
from .damage import IndexDamage
from .docstore import DOCS_FILE, OFFSETS_FILE, passage_line

HEADER_BYTES = 4096  # an .npy header np.save writes for a 1-D array is 128 bytes; versions 2 and 3 may be longer
OFFSET = np.dtype("<i8")
HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
BLOCKS_FILE = "docs.blocks.json"  # the digests of the docs store's blocks, written beside it by a build in shards


def write_block_record(
    folder: Path, names: tuple[str, ...] = (DOCS_FILE, OFFSETS_FILE), record: str = BLOCKS_FILE
) -> None:
    """The digests of the blocks of `folder`'s files `names` (its docs store) written beside them (`record`)."""
    (folder / record).write_text(json.dumps(block_record(folder, names)), encoding="utf-8")


def checked_ranges(url: str, record: Path, name: str) -> CheckedRanges:
    """Ranged reads of the file `name` in the folder `url`, checked by the block digests `record` holds (a local
    copy of its BLOCKS_FILE or another `write_block_record`, checked by content); an IndexDamage where the record is
    not one a build writes."""
    try:
        return recorded_ranges(url, json.loads(record.read_bytes()), name)
    except (ValueError, KeyError, TypeError) as exc:
        raise IndexDamage(joined(url, record.name), f"is not the record of {name}'s blocks ({exc})") from None


class RemoteDocStore:
    """The docs store in the folder `url` of a store, holding `passages` passages and `size` bytes of docs.jsonl
    (as listed), its blocks' digests in `record` (a local copy of its BLOCKS_FILE); an IndexDamage naming the file
    where its offsets do not say so, or its bytes read at opening are not those recorded."""

    def __init__(self, url: str, passages: int, size: int, record: Path) -> None:
        self.docs, self.offsets_url = joined(url, DOCS_FILE), joined(url, OFFSETS_FILE)
        self.docs_ranges, self.offsets = (
            checked_ranges(url, record, DOCS_FILE),
            checked_ranges(url, record, OFFSETS_FILE),
        )
        self.passages = passages
        if self.docs_ranges.size != size:
            raise IndexDamage(
                joined(url, BLOCKS_FILE), f"records {self.docs_ranges.size} bytes of {DOCS_FILE}, not {size}"
            )
        try:
            self.opened(size)
        except BlockMismatch as exc:
            raise IndexDamage(exc.url, f"{exc.problem}: it was written over") from None

    def opened(self, size: int) -> None:
        """The offsets' header and ends checked (`RemoteDocStore`)."""
        passages = self.passages
        header = io.BytesIO(self.offsets.read(0, HEADER_BYTES))
        try:
            version = np.lib.format.read_magic(header)
            read_header = HEADER_READERS.get(version)
            if read_header is None:
                raise ValueError(f"format version {version}")
            shape, fortran, dtype = read_header(header)
        except ValueError as exc:
            raise IndexDamage(self.offsets_url, f"is not an .npy file ({exc})") from None
        if dtype != OFFSET or fortran or shape != (passages + 1,):
            raise IndexDamage(
                self.offsets_url, f"holds {dtype} {shape}, not the {passages + 1} int64 offsets of {passages} passages"
            )
        self.data_start = header.tell()
        if (first := self.offset_pair(0)[0]) != 0:
            raise IndexDamage(self.offsets_url, f"starts at byte {first}, not 0")
        if (end := self.offset_pair(passages - 1)[1] if passages else 0) != size:
            raise IndexDamage(self.docs, f"holds {size} bytes, {OFFSETS_FILE} says {end}")

    def __len__(self) -> int:
        return self.passages

    def offset_pair(self, index: int) -> tuple[int, int]:
        """Where line `index` of docs.jsonl starts and ends."""
        start = self.data_start + OFFSET.itemsize * index
        pair = np.frombuffer(self.offsets.read(start, start + 2 * OFFSET.itemsize), dtype=OFFSET)
        if len(pair) != 2:
            raise IndexDamage(self.offsets_url, f"ends before passage {index}'s offsets")
        return int(pair[0]), int(pair[1])

    def get(self, index: int, score: float | None = None) -> Document:
        """Passage `index` (`DocStore.get`'s), read by two ranged reads (fewer where its blocks were read lately);
        a RetrievalError where their bytes are not those the build wrote (the search that returns it fails)."""
        try:
            start, stop = self.offset_pair(index)
            line = self.docs_ranges.read(start, stop)
        except BlockMismatch as exc:
            raise RetrievalError(
                f"{exc}: passage {index} of this shard is not what the build wrote (the object was written over); "
                "build the index again"
            ) from None
        return passage_line(line, self.docs, index, score)

    def close(self) -> None:
        pass
