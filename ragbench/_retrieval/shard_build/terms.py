"""A shard build's statistics merged by term, never on the driver: step 1 writes its part's terms with their
document frequencies and its own term numbers beside its shard's folder (NNN.terms.jsonl: one line a bucket, each
term in the bucket its stable hash names, `bucket_of`); the middle step, one task a bucket (`merge_bucket`), adds up
every part's frequencies of its bucket's terms and writes them in the kind's order of terms (terms/BBB.json); step 2
reads the buckets merged in that order (`merged_terms`): a term's place in it is its number in the whole corpus.
The driver gets only each file's record and counts.

A kind numbers its terms (`ShardKind.term_order`) by word ("sorted": lucene_bm25) or in the corpus's order of first
sight ("first_seen": bm25s, whose one-process build numbers a term when it first meets it): a term's first sight is
the first part holding it, at that part's own number for it.
"""

from __future__ import annotations

import heapq
import json
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..._storage.content_digest import content_digest
from ..._storage.files import write_atomically
from .kind import Stats, TermOrder

TERMS_SUFFIX = ".terms.jsonl"  # beside a shard's folder: its part's terms, bucket by bucket
BUCKETS_DIR = "terms"  # in the building folder: the merged buckets


def bucket_of(word: str, buckets: int) -> int:
    """The bucket of `word`: the same in every process (Python's `hash` of a str is not)."""
    return zlib.crc32(word.encode("utf-8", "surrogatepass")) % buckets


def write_part_terms(path: Path, words: list[str], doc_freqs: list[int], buckets: int) -> Stats:
    """A part's terms (`words`: in the order of its own term numbers) and frequencies written to `path`, one JSON
    line a bucket; the lines' byte offsets and the file's record (size, digest) returned."""
    lines: list[list[Any]] = [[] for _ in range(buckets)]
    for number, (word, count) in enumerate(zip(words, doc_freqs)):
        lines[bucket_of(word, buckets)].append([word, int(count), number])
    encoded = [json.dumps(line) + "\n" for line in lines]  # ASCII: a character a byte
    offsets = [0]
    for line in encoded:
        offsets.append(offsets[-1] + len(line))
    write_atomically(path, "".join(encoded))
    return {"offsets": offsets, **file_record(path)}


def file_record(path: Path) -> Stats:
    return {"bytes": path.stat().st_size, "digest": content_digest(path)}


def merge_bucket(
    parts: list[tuple[Path, list[int]]], bucket: int, order: TermOrder, out: Path, record: Path, inputs: Any
) -> Stats:
    """Bucket `bucket` of every part (its terms file, its offsets) merged into `out`: its terms in `order`, each
    [word, document frequency in the whole corpus, first part, that part's number]; its counts returned and
    recorded in `record` with `inputs` (the parts' files' records: a bucket is kept only while they are the same)."""
    merged: dict[str, list[Any]] = {}
    for part, (path, offsets) in enumerate(parts):
        with path.open("rb") as file:
            file.seek(offsets[bucket])
            for word, count, number in json.loads(file.read(offsets[bucket + 1] - offsets[bucket])):
                if word in merged:
                    merged[word][1] += count
                else:
                    merged[word] = [word, count, part, number]
    terms = sorted(merged.values(), key=ORDERS[order])
    out.parent.mkdir(exist_ok=True)
    write_atomically(out, json.dumps(terms))
    result = {"terms": len(terms), "postings": sum(term[1] for term in terms)}
    write_atomically(record, json.dumps({"result": result, "file": file_record(out), "inputs": inputs}))
    return result


def merged_terms(buckets: list[str], order: TermOrder) -> Iterator[tuple[str, int]]:
    """Every term of the corpus with its document frequency, in `order` (the buckets' runs merged): the place of a
    term its number in the whole corpus."""
    runs = [json.loads(Path(path).read_text(encoding="utf-8")) for path in buckets]
    for word, count, _, _ in heapq.merge(*runs, key=ORDERS[order]):
        yield str(word), int(count)


ORDERS: dict[str, Callable[[list[Any]], Any]] = {
    "sorted": lambda term: str(term[0]),
    "first_seen": lambda term: (int(term[2]), int(term[3])),
}
