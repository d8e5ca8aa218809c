"""What checking a response cache costs: at open, and on every read.

Builds a response cache of about 100 MB (responses of ~2 kB, each row with its checksum) and prints,
in one run: opening it as a run does (ragbench._storage.cache.ResponseCache: page 1 and the schema
read, O(1)), `PRAGMA quick_check` (reads every page) with the file in the page cache and with it
dropped from it (posix_fadvise DONTNEED: read from disk), and reading 5,000 entries through the cache
(SELECT, checksum, JSON, Response) beside the checksums' share of it.

Run: python benchmarks/cache_open.py [--megabytes 100] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import tempfile
import time
from pathlib import Path

from ragbench._storage.cache import ResponseCache
from ragbench._storage.store_checks import row_checksum
from ragbench._values.llm_request import Request
from ragbench._values.llm_responses import Response


def build(path: Path, megabytes: int) -> list[str]:
    cache = ResponseCache(path)
    keys = []
    for batch in range(megabytes * 1_000_000 // 4_200 // 1_000 + 1):  # one ~2.3 kB row per 4 kB page
        entries = []
        for i in range(1_000):
            key = Request(prompt=f"question {batch}-{i}").cache_key("bench")
            keys.append(key)
            entries.append((key, "bench", Response(texts=[f"answer {batch}-{i} " + "x" * 2_000])))
        cache.put_many(entries)
    cache.close()
    return keys


def drop_from_page_cache(path: Path) -> None:
    for name in (path, Path(f"{path}-wal")):
        if name.exists():
            descriptor = os.open(name, os.O_RDONLY)
            os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(descriptor)


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def quick_check(path: Path) -> None:
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="a 10 MB cache")
    args = parser.parse_args()
    megabytes = 10 if args.quick else args.megabytes
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cache.sqlite"
        keys = build(path, megabytes)
        print(f"cache: {path.stat().st_size / 1e6:.0f} MB, {len(keys)} entries")
        drop_from_page_cache(path)
        print(f"open as a run does (from disk):        {timed(lambda: ResponseCache(path).close()) * 1000:8.1f} ms")
        drop_from_page_cache(path)
        print(f"PRAGMA quick_check (from disk):        {timed(lambda: quick_check(path)) * 1000:8.1f} ms")
        print(f"PRAGMA quick_check (in page cache):    {timed(lambda: quick_check(path)) * 1000:8.1f} ms")
        print(f"open as a run does (in page cache):    {timed(lambda: ResponseCache(path).close()) * 1000:8.1f} ms")
        wanted = keys[:: max(1, len(keys) // 5_000)][:5_000]
        cache = ResponseCache(path)
        reads = timed(lambda: [cache.get(key) for key in wanted])
        cache.close()
        db = sqlite3.connect(path)
        rows = [db.execute("SELECT key, response FROM responses WHERE key = ?", (key,)).fetchone() for key in wanted]
        db.close()
        checksums = timed(lambda: [row_checksum(key, value) for key, value in rows])
        print(
            f"{len(wanted)} reads through the cache: {reads * 1000:.0f} ms, of which the checksums "
            f"{checksums * 1000:.0f} ms ({checksums / reads:.0%})"
        )


if __name__ == "__main__":
    main()
