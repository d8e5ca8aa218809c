"""A docs store (`docstore`) in an object store, read where it lies: a passage is two ranged reads, its two
offsets (16 bytes of docs.offsets.npy) and then its line of docs.jsonl; neither file is ever fetched whole. Opening
it reads the offsets' .npy header and last offset, and checks them against the passages it must hold and the size
the store lists for docs.jsonl, as `check_docstore` checks a local store."""

from __future__ import annotations

import io

import numpy as np

from ..._storage.locations import joined, read_range
from ..._types import Document
from .damage import IndexDamage
from .docstore import DOCS_FILE, OFFSETS_FILE, passage_line

HEADER_BYTES = 4096  # an .npy header np.save writes for a 1-D array is 128 bytes; versions 2 and 3 may be longer
OFFSET = np.dtype("<i8")
HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


class RemoteDocStore:
    """The docs store in the folder `url` of a store, holding `passages` passages and `size` bytes of docs.jsonl
    (as listed); an IndexDamage naming the file where its offsets do not say so."""

    def __init__(self, url: str, passages: int, size: int) -> None:
        self.docs, self.offsets_url = joined(url, DOCS_FILE), joined(url, OFFSETS_FILE)
        self.passages = passages
        header = io.BytesIO(read_range(self.offsets_url, 0, HEADER_BYTES))
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
        pair = np.frombuffer(read_range(self.offsets_url, start, start + 2 * OFFSET.itemsize), dtype=OFFSET)
        if len(pair) != 2:
            raise IndexDamage(self.offsets_url, f"ends before passage {index}'s offsets")
        return int(pair[0]), int(pair[1])

    def get(self, index: int, score: float | None = None) -> Document:
        """Passage `index` (`DocStore.get`'s), read by two ranged reads."""
        start, stop = self.offset_pair(index)
        return passage_line(read_range(self.docs, start, stop), self.docs, index, score)

    def close(self) -> None:
        pass
