"""The passages of an index, so that a hit returns its title and text without the corpus file.

`docs.jsonl` holds one compact `{"id", "title", "text"[, "url"][, "title_line"][, "wikipedia_id"][, "metadata"]}`
line per passage in index order (`title_line`: a FlashRAG passage's first line of `contents` as written;
`wikipedia_id`: the page a passage is from; `metadata`: the passage's other metadata, e.g. a corpus line's
`metadata` object; all of them kept in the Document's metadata, ragbench._retrieval.corpus.readers);
`docs.offsets.npy` holds the byte offset of every line (plus the end). Both are memory-mapped:
opening a 21M-passage store costs nothing, a lookup reads one line.
"""

from __future__ import annotations

import json
import mmap
from array import array
from collections import Counter
from pathlib import Path

import numpy as np
import orjson

from ..._storage.jsonl import dumps
from ..._types import Document
from ..._values.json_values import JsonObject
from ..base import RetrievalError
from ..corpus.readers import PAGE_ID, TITLE_LINE
from .damage import INTEGERS, IndexDamage, ascending, expect_count, read_array, vector
from .staging import MANIFEST_FILE

KEPT_METADATA = (TITLE_LINE, PAGE_ID)

DOCS_FILE = "docs.jsonl"
OFFSETS_FILE = "docs.offsets.npy"


class DocStoreWriter:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.handle = open(folder / DOCS_FILE, "wb")  # noqa: SIM115 (held open, closed by close())
        self.offsets_path = folder / OFFSETS_FILE
        self.offsets = array("q", [0])  # 8 bytes a passage
        self.id_hashes = array("q")  # and 8 more: `repeated_ids` never holds every id

    def add(self, doc: Document) -> None:
        line = passage_line_bytes(doc)
        self.handle.write(line)
        self.offsets.append(self.offsets[-1] + len(line))
        self.id_hashes.append(hash(doc.id))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def close(self) -> None:
        self.handle.close()
        np.save(self.offsets_path, np.frombuffer(self.offsets, dtype=np.int64))

    def repeated_ids(self) -> dict[str, int]:
        """The ids more than one passage has, with how many, in the order they first appear (after `close`).
        Exact: the passages whose ids hash alike are read back."""
        hashes = np.frombuffer(self.id_hashes, dtype=np.int64)
        ordered = np.sort(hashes)
        colliding = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
        if not len(colliding):
            return {}
        store = DocStore(self.folder)
        try:
            counts = Counter(store.get(int(i)).id for i in np.flatnonzero(np.isin(hashes, colliding)))
        finally:
            store.close()
        return {doc_id: count for doc_id, count in counts.items() if doc_id is not None and count > 1}


def passage_line_bytes(doc: Document) -> bytes:
    """The store's line of `doc`, with its newline. A passage of id, title and text alone (a build's every
    passage, nearly) is written as `dumps` writes its object, its strings by orjson (which encodes a string as
    json's string encoder does, every character but a lone surrogate: tests/retrieval/test_lucene_postings.py),
    without the encoder's walk of an object: a fifth of the time."""
    if not doc.url and not doc.metadata and type(doc.id) is str:
        try:
            return b'{"id": %b, "title": %b, "text": %b}\n' % (
                orjson.dumps(doc.id),
                orjson.dumps(doc.title),
                orjson.dumps(doc.text),
            )
        except orjson.JSONEncodeError:  # a lone surrogate, which `dumps` writes as its escape
            pass
    record: JsonObject = {"id": doc.id, "title": doc.title, "text": doc.text}
    if doc.url:
        record["url"] = doc.url
    record.update({key: doc.metadata[key] for key in KEPT_METADATA if key in doc.metadata})
    other = {key: value for key, value in doc.metadata.items() if key not in KEPT_METADATA}
    if other:
        record["metadata"] = other
    return dumps(record).encode("utf-8") + b"\n"


class DocStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.offsets = np.load(folder / OFFSETS_FILE, mmap_mode="r")
        with open(folder / DOCS_FILE, "rb") as handle:
            self.data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def size(self) -> int:
        """Bytes of docs.jsonl."""
        return len(self.data)

    @property
    def end(self) -> int:
        """Where the offsets say docs.jsonl ends."""
        return int(self.offsets[-1])

    def get(self, index: int, score: float | None = None) -> Document:
        """Passage `index`; a line changed in place (what `check_docstore` cannot see) fails the search that
        returns it, naming the line, as a RetrievalError."""
        line = self.data[int(self.offsets[index]) : int(self.offsets[index + 1])]
        return passage_line(line, str(self.folder / DOCS_FILE), index, score)

    def ids(self) -> list[str]:
        """Every passage's id in order, each line's "id" alone (no Document made: a build's `id_ranks` reads them
        all). orjson reads a line as json does where it reads it at all; any other line is `get`'s."""
        offsets = self.offsets.tolist()
        found = []
        for index in range(len(offsets) - 1):
            try:
                doc_id = orjson.loads(self.data[offsets[index] : offsets[index + 1]])["id"]
            except (orjson.JSONDecodeError, KeyError, TypeError):
                doc_id = self.get(index).id
            found.append(doc_id or "")
        return found

    def close(self) -> None:
        self.data.close()


def passage_line(line: bytes, where: str, index: int, score: float | None = None) -> Document:
    """The passage of line `index` (from 0) of the docs store `where`; a RetrievalError naming the line where it
    is not one a build writes."""
    try:
        record = json.loads(line)
        metadata = {key: record[key] for key in KEPT_METADATA if key in record}
        return Document(
            id=record["id"],
            title=record["title"],
            text=record["text"],
            url=record.get("url"),
            score=score,
            metadata={**metadata, **record.get("metadata", {})},
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise RetrievalError(
            f"{where}:{index + 1}: not the passage line a build writes ({type(exc).__name__}: {exc}): the index is "
            "damaged, build it again"
        ) from None


def check_docstore(folder: Path, passages: int) -> None:
    """An IndexDamage unless the store at `folder` holds the `passages` lines its manifest counts: an offset a passage, from 0, each
    above the one before (a line holds at least its newline), the last at the end of docs.jsonl."""
    offsets = vector(OFFSETS_FILE, read_array(folder, OFFSETS_FILE), INTEGERS)
    if not len(offsets):
        raise IndexDamage(OFFSETS_FILE, "holds no offsets (a store has at least its end)")
    expect_count(OFFSETS_FILE, "passages", len(offsets) - 1, passages, MANIFEST_FILE)
    if offsets[0] != 0:
        raise IndexDamage(OFFSETS_FILE, f"starts at byte {offsets[0]}, not 0")
    ascending(OFFSETS_FILE, offsets, "byte offset", strictly=True)
    try:
        size = (folder / DOCS_FILE).stat().st_size
    except FileNotFoundError:
        raise IndexDamage(DOCS_FILE, "missing") from None
    expect_count(DOCS_FILE, "bytes", size, int(offsets[-1]), OFFSETS_FILE)
