"""A corpus's passages by id, read from disk at each lookup, so a corpus of any size costs 16 bytes a passage.

One pass over the file (`corpus.corpus_rows`) keeps, per passage, the hash of its id and the byte offset its
row starts at, sorted by hash; a lookup reads the rows whose ids hash alike and keeps the one whose id is the
one asked (the last in the file where several passages share the id, as a dict built over the whole corpus
keeps). No text and no id stays in memory.
"""

from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np

from ..._types import Document
from .readers import corpus_rows, passage_reader


class CorpusLookup:
    """`get(docid)`: the passage of a JSONL or DPR TSV corpus file with that id, or None."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        hashes, starts = array("q"), array("q")
        for start, passage in corpus_rows(self.path):
            if isinstance(passage, Document):
                hashes.append(hash(passage.id))
                starts.append(start)
        order = np.argsort(np.frombuffer(hashes, dtype=np.int64), kind="stable")  # file order among equal hashes
        self.hashes = np.frombuffer(hashes, dtype=np.int64)[order]
        self.starts = np.frombuffer(starts, dtype=np.int64)[order]
        self.passage_at = passage_reader(self.path)

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def nbytes(self) -> int:
        """What the lookup holds besides the path."""
        return int(self.hashes.nbytes + self.starts.nbytes)

    def get(self, docid: str) -> Document | None:
        wanted = hash(docid)
        first, end = (int(np.searchsorted(self.hashes, wanted, side)) for side in ("left", "right"))
        for start in reversed(self.starts[first:end].tolist()):  # the last passage with the id wins
            passage = self.passage_at(start)
            if isinstance(passage, Document) and passage.id == docid:
                return passage
        return None
