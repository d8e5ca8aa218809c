"""What checking a docs store's ranged reads by content costs (ragbench/_storage/block_digests.py): a shard's
docs store in an object store (moto's S3 server on 127.0.0.1), its hits read as the head reads them.

Writes a docs store of N passages (~600 bytes each), its blocks' digests (`write_block_record`: the time a build
spends on them) and puts them in the store; then reads the same random hits (`--hits`, passage numbers spread over
the store) two ways: unchecked, as before (two ranged GETs a hit: its 16 bytes of offsets, its line), and checked
(`RemoteDocStore`: the blocks those lie in, each checked by its digest; the last 32 blocks of each file kept), and
prints for each the time a hit, GETs a hit and bytes read a hit, and the first way's passages equal the second's.

Run: python benchmarks/store_ranged_reads.py [--passages 100000] [--hits 2000]   (needs moto, flask, s3fs)
     python benchmarks/store_ranged_reads.py --quick    # 2,000 passages, 20 hits (the script runs: moto's GETs
                                                        # were nearly all of its CPU seconds at 200)

Measured (2 shared cores, load 4.6-12; moto's requests cost ~50 ms each there): 100,000 passages, docs.jsonl
62.1 MB, its block digests written in 0.17 s; unchecked 102 ms, 2.00 GETs and 0.6 KiB a hit; checked 53-112 ms,
0.97 GETs and 62.7 KiB a hit (the offsets' blocks are kept: a GET a hit, of 64 KiB rather than a line).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from store_corpus_build import start_store


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--hits", type=int, default=2_000)
    parser.add_argument("--quick", action="store_true", help="2,000 passages, 20 hits")
    args = parser.parse_args()
    if args.quick:
        args.passages, args.hits = 2_000, 20
    with tempfile.TemporaryDirectory() as scratch:
        server = start_store(Path(scratch) / "cache")  # moto's backends live in this process: reset, then `bench`
        try:
            (Path(scratch) / "docs").mkdir()
            run(Path(scratch) / "docs", args.passages, args.hits)
        finally:
            server.stop()


def run(folder: Path, passages: int, hits: int) -> None:
    from s3fs import S3FileSystem

    from ragbench._retrieval.index.docstore import DOCS_FILE, OFFSETS_FILE, DocStoreWriter
    from ragbench._retrieval.index.remote_docstore import BLOCKS_FILE, write_block_record
    from ragbench._storage import locations
    from ragbench._types import Document

    rng = random.Random(0)
    words = "river mountain king queen castle war peace music song album artist silence garden winter".split()
    writer = DocStoreWriter(folder)
    for number in range(passages):
        writer.add(Document(id=f"p{number}", title=f"Title {number % 97}", text=" ".join(rng.choices(words, k=90))))
    writer.close()
    started = time.perf_counter()
    write_block_record(folder)
    digesting = time.perf_counter() - started
    size = (folder / DOCS_FILE).stat().st_size
    fs = S3FileSystem(skip_instance_cache=True)
    for name in (DOCS_FILE, OFFSETS_FILE, BLOCKS_FILE):
        fs.put_file(str(folder / name), f"bench/docs/{name}")
    print(f"{passages} passages, docs.jsonl {size / 1e6:.1f} MB: block digests written in {digesting:.2f} s")

    counted = {"gets": 0, "bytes": 0}
    plain = locations.read_range

    def counting(location: str, start: int, stop: int) -> bytes:
        data = plain(location, start, stop)
        counted["gets"] += 1
        counted["bytes"] += len(data)
        return data

    import ragbench._storage.block_digests as blocks

    locations.read_range = blocks.read_range = counting  # the modules both readers call; put back below
    try:
        measure(folder, passages, hits, size, rng, counting, counted)
    finally:
        locations.read_range = blocks.read_range = plain


def measure(
    folder: Path, passages: int, hits: int, size: int, rng: random.Random, counting: Any, counted: dict[str, int]
) -> None:
    """Reads the same random hits unchecked and checked by blocks (module docstring), `counting` their GETs."""
    from ragbench._retrieval.index.docstore import DOCS_FILE, OFFSETS_FILE, passage_line
    from ragbench._retrieval.index.remote_docstore import BLOCKS_FILE, RemoteDocStore
    from ragbench._types import Document

    numbers = [rng.randrange(passages) for _ in range(hits)]
    url, offsets_url, docs_url = "s3://bench/docs", "s3://bench/docs/" + OFFSETS_FILE, "s3://bench/docs/" + DOCS_FILE
    header = 128  # np.save's header of a 1-D int64 array

    def unchecked(number: int) -> Document:
        pair = np.frombuffer(counting(offsets_url, header + 8 * number, header + 8 * number + 16), dtype="<i8")
        return passage_line(counting(docs_url, int(pair[0]), int(pair[1])), docs_url, number)

    store = RemoteDocStore(url, passages, size, folder / BLOCKS_FILE)
    results = {}
    for label, read in (("unchecked (before)", unchecked), ("checked by blocks", store.get)):
        counted.update(gets=0, bytes=0)
        started = time.perf_counter()
        results[label] = [read(number).id for number in numbers]
        seconds = time.perf_counter() - started
        print(
            f"{label:20s} {seconds / hits * 1000:6.2f} ms a hit, {counted['gets'] / hits:.2f} GETs a hit, "
            f"{counted['bytes'] / hits / 1024:7.1f} KiB a hit"
        )
    assert len(set(map(tuple, results.values()))) == 1, "the two ways read other passages"


if __name__ == "__main__":
    main()
