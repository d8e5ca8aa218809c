"""A shard build's statistics merged by term, never on the driver: step 1 writes its part's terms with their
document frequencies beside its shard's folder (NNN.terms.jsonl: one line a bucket, each term in the bucket its
stable hash names, `bucket_of`); the middle step, one task a bucket (`merge_bucket`), adds up every part's
frequencies of its bucket's terms and writes them sorted (terms/BBB.json); step 2 reads the buckets merged in the
order of the terms (`merged_terms`). The driver gets only each file's record and counts.
"""

from __future__ import annotations

import heapq
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._storage.content_digest import content_digest
from ..._storage.files import write_atomically
from .kind import Stats

TERMS_SUFFIX = ".terms.jsonl"  # beside a shard's folder: its part's terms, bucket by bucket
BUCKETS_DIR = "terms"  # in the building folder: the merged buckets


def bucket_of(word: str, buckets: int) -> int:
    """The bucket of `word`: the same in every process (Python's `hash` of a str is not)."""
    return zlib.crc32(word.encode("utf-8", "surrogatepass")) % buckets


def write_part_terms(path: Path, words: list[str], doc_freqs: list[int], buckets: int) -> Stats:
    """A part's terms and frequencies written to `path`, one JSON line a bucket; the line's byte offsets and the
    file's record (size, digest) returned."""
    lines: list[list[Any]] = [[] for _ in range(buckets)]
    for word, count in zip(words, doc_freqs):
        lines[bucket_of(word, buckets)].append([word, int(count)])
    encoded = [json.dumps(line) + "\n" for line in lines]  # ASCII: a character a byte
    offsets = [0]
    for line in encoded:
        offsets.append(offsets[-1] + len(line))
    write_atomically(path, "".join(encoded))
    return {"offsets": offsets, **file_record(path)}


def file_record(path: Path) -> Stats:
    return {"bytes": path.stat().st_size, "digest": content_digest(path)}


def merge_bucket(parts: list[tuple[Path, list[int]]], bucket: int, out: Path, record: Path, inputs: Any) -> Stats:
    """Bucket `bucket` of every part (its terms file, its offsets) merged into `out`: its terms sorted, each with
    its document frequency in the whole corpus; its counts returned and recorded in `record` with `inputs` (the
    parts' files' records: a bucket is kept only while they are the same)."""
    doc_freqs: dict[str, int] = {}
    for path, offsets in parts:
        with path.open("rb") as file:
            file.seek(offsets[bucket])
            for word, count in json.loads(file.read(offsets[bucket + 1] - offsets[bucket])):
                doc_freqs[word] = doc_freqs.get(word, 0) + count
    words = sorted(doc_freqs)
    out.parent.mkdir(exist_ok=True)
    write_atomically(out, json.dumps([[word, doc_freqs[word]] for word in words]))
    result = {"terms": len(words), "postings": sum(doc_freqs.values())}
    write_atomically(record, json.dumps({"result": result, "file": file_record(out), "inputs": inputs}))
    return result


def merged_terms(buckets: list[str]) -> Iterator[tuple[str, int]]:
    """Every term of the corpus with its document frequency, in sorted order (the buckets' sorted runs merged)."""
    runs = [json.loads(Path(path).read_text(encoding="utf-8")) for path in buckets]
    for word, count in heapq.merge(*runs, key=lambda pair: str(pair[0])):
        yield str(word), int(count)
