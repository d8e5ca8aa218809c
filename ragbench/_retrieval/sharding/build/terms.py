"""A shard build's statistics merged by term, never on the driver: step 1 writes its part's terms with their
document frequencies and its own term numbers beside its shard's folder (NNN.terms.jsonl: one line a bucket, each
term in the bucket its stable hash names, `bucket_of`); the middle step, one task a bucket (`merge_bucket`), adds up
every part's frequencies of its bucket's terms and writes them in the kind's order of terms (terms/BBB.json); step 2
reads the buckets merged in that order (`merged_terms`): a term's place in it is its number in the whole corpus.
The driver gets only each file's record and counts.

A kind numbers its terms (`ShardedKind.term_order`) by word ("sorted": lucene_bm25) or in the corpus's order of first
sight ("first_seen": bm25s, whose one-process build numbers a term when it first meets it): a term's first sight is
the first part holding it, at that part's own number for it.
"""

from __future__ import annotations

import heapq
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...._storage.content_digest import content_digest
from ...._storage.files import replacing, write_atomically
from ...._storage.locations import open_for_reading, read_range
from .kind import Stats, TermOrder
from .state_files import StateFiles, bucket_name, bucket_record_name, terms_name


def bucket_of(word: str, buckets: int) -> int:
    """The bucket of `word`: the same in every process (Python's `hash` of a str is not)."""
    return zlib.crc32(word.encode("utf-8", "surrogatepass")) % buckets


def write_part_terms(path: Path, words: list[str], doc_freqs: ArrayLike, buckets: int) -> Stats:
    """A part's terms (`words`: in the order of its own term numbers) and frequencies written to `path`, one JSON
    line a bucket ([words, document frequencies, the part's numbers]), a line at a time (never every bucket's lines
    at once); the lines' byte offsets and the file's record (size, digest) returned."""
    counts = np.asarray(doc_freqs, dtype=np.int64)
    places = np.fromiter((bucket_of(word, buckets) for word in words), dtype=np.int64, count=len(words))
    numbers = np.argsort(places, kind="stable")  # the part's numbers, bucket by bucket, each bucket's in order
    ends = np.searchsorted(places[numbers], np.arange(buckets), side="right")
    offsets = [0]
    with replacing(path) as handle:
        for start, stop in zip([0, *ends[:-1]], ends):
            run = numbers[start:stop]
            line = json.dumps([[words[number] for number in run], counts[run].tolist(), run.tolist()]) + "\n"
            handle.write(line.encode())  # ASCII: a character a byte
            offsets.append(offsets[-1] + len(line))
    return {"offsets": offsets, **file_record(path)}


def file_record(path: Path) -> Stats:
    return {"bytes": path.stat().st_size, "digest": content_digest(path)}


def merge_bucket(state: StateFiles, parts: list[list[int]], bucket: int, order: TermOrder, inputs: Any) -> Stats:
    """`merged_bucket` in a scratch folder of the task's own (`StateFiles.working`)."""
    with state.working() as files:
        return merged_bucket(files, parts, bucket, order, inputs)


def merged_bucket(state: StateFiles, parts: list[list[int]], bucket: int, order: TermOrder, inputs: Any) -> Stats:
    """Bucket `bucket` of every part (its terms file in `state`, read at its `parts` offsets) merged: its terms in
    `order`, with their document frequencies in the whole corpus and first sights (`first_sight`), written to the
    bucket's file of `state`; its counts returned and recorded with `inputs` (the parts' files' records: a bucket is
    kept only while they are the same)."""
    places: dict[str, int] = {}
    words: list[str] = []
    doc_freqs: list[int] = []
    firsts: list[int] = []
    for part, offsets in enumerate(parts):
        line = json.loads(read_range(state.location(terms_name(part)), offsets[bucket], offsets[bucket + 1]))
        for word, count, number in zip(*line):
            place = places.setdefault(word, len(words))
            if place < len(words):
                doc_freqs[place] += count
                continue
            words.append(word)
            doc_freqs.append(count)
            firsts.append(first_sight(part, number))
    index = ordered(words, firsts, order)
    out = state.path(bucket_name(bucket))
    out.parent.mkdir(parents=True, exist_ok=True)
    columns = {"words": [words[i] for i in index], "doc_freqs": [doc_freqs[i] for i in index]}
    write_atomically(out, json.dumps({**columns, "firsts": [firsts[i] for i in index]}))
    result = {"terms": len(words), "postings": sum(doc_freqs)}
    file = file_record(out)
    state.put(bucket_name(bucket))
    state.write_record(bucket_record_name(bucket), {"result": result, "file": file, "inputs": inputs})
    return result


def first_sight(part: int, number: int) -> int:
    """Where the corpus first meets a term: the first part holding it, at that part's own number for it."""
    return part << 32 | number


def ordered(words: list[str], firsts: list[int], order: TermOrder) -> list[int]:
    """The terms' places in `order` (sorted runs merged in linear time: Python's sort finds them)."""
    if order == "sorted":
        return sorted(range(len(words)), key=words.__getitem__)
    return [int(i) for i in np.argsort(np.asarray(firsts, dtype=np.int64), kind="stable")]


def merged_terms(buckets: list[str], order: TermOrder) -> tuple[list[str], NDArray[np.int64]]:
    """Every term of the corpus in `order`, the place of a term its number in the whole corpus, and their document
    frequencies: the buckets' runs (each in `order`, `merged_bucket`) merged as they stream (`heapq.merge`), with no
    list of places nor a second list of the terms."""
    runs = []
    total = 0
    for path in buckets:
        with open_for_reading(path) as file:  # a local path, or an object store's URL (`state_files`)
            bucket = json.loads(file.read())
        words = bucket["words"]
        keys = words if order == "sorted" else bucket["firsts"]
        runs.append(zip(keys, words, np.asarray(bucket["doc_freqs"], dtype=np.int64)))
        total += len(words)
    merged: list[str] = []

    def doc_freqs() -> Iterator[np.int64]:  # the merged terms' frequencies, each term put in `merged` on its way
        for _, word, count in heapq.merge(*runs):
            merged.append(word)
            yield count

    return merged, np.fromiter(doc_freqs(), dtype=np.int64, count=total)
