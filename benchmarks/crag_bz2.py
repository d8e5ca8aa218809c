"""CRAG Task 3's `.tar.bz2` decompressed on every core (indexed_bzip2, the `fast` extra) against the
stdlib's one-core reader, on synthetic records at real CRAG page sizes (ragbench.tasks.crag.synthetic:
the records compress 7.2:1 in bz2, the CRAG repository's example file 7.6:1).

Per reader, the least of `--repeat` passes over the same multi-part archive:
  stream    the decompressed bytes alone (`loader._bz2_stream`, read in 4 MiB blocks): MB/s of
            decompressed data
  records   what a run reads: tar, JSON and all (`read_task3_archive`): records/s and MB/s
Threads: the stdlib (one core), then indexed_bzip2 on 1, 2, 4, ... threads up to the usable cores.
Prints one table and the best parallel rate over the stdlib's.
Usage: python benchmarks/crag_bz2.py [--questions 16] [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from ragbench._run.lifetime.workers import usable_cores
from ragbench.tasks.crag.loader import _bz2_stream, parallel_bz2, read_task3_archive
from ragbench.tasks.crag.synthetic import CRAG_PAGES, PageSizes, write_task3_archive

BLOCK = 1 << 22


def stream_seconds(archive: Path, threads: int) -> tuple[float, int]:
    """Wall seconds to decompress the whole archive, and the bytes it gave."""
    started, size = time.perf_counter(), 0
    with _bz2_stream(archive, threads) as stream:
        while block := stream.read(BLOCK):
            size += len(block)
    return time.perf_counter() - started, size


def records_seconds(archive: Path, threads: int) -> tuple[float, int]:
    started = time.perf_counter()
    count = sum(1 for _ in read_task3_archive(archive, threads=threads))
    return time.perf_counter() - started, count


def thread_counts(cores: int) -> list[int]:
    counts, threads = [0], 1
    while threads < cores:
        counts.append(threads)
        threads *= 2
    return counts + [cores]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2 questions x 4 small pages, once")
    args = parser.parse_args()
    pages, sizes = 50, CRAG_PAGES
    if args.quick:
        args.questions, args.repeat, pages, sizes = 2, 1, 4, PageSizes.small(4_000)
    cores = usable_cores()
    counts = thread_counts(cores) if parallel_bz2() else [0]
    with tempfile.TemporaryDirectory() as scratch:
        archive = write_task3_archive(Path(scratch), args.questions, pages, sizes)
        packed = sum(part.stat().st_size for part in Path(scratch).iterdir())
        rows = {}
        for threads in counts:
            stream, size = min(stream_seconds(archive, threads) for _ in range(args.repeat))
            records, count = min(records_seconds(archive, threads) for _ in range(args.repeat))
            rows[threads] = (stream, records)
        print(
            f"{args.questions} records x {pages} pages, {size / 1e6:.1f} MB of tar in {packed / 1e6:.1f} MB of bz2 "
            f"({size / packed:.1f}:1); {cores} usable cores; least of {args.repeat}"
        )
        print("| reader | threads | stream s | stream MB/s | records s | records/s | records MB/s |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for threads, (stream, records) in rows.items():
            print(
                f"| {'indexed_bzip2' if threads else 'stdlib'} | {threads or 1} | {stream:.2f} | "
                f"{size / stream / 1e6:.1f} | {records:.2f} | {count / records:.2f} | {size / records / 1e6:.1f} |"
            )
        if len(rows) > 1:
            best = min((threads for threads in rows if threads), key=lambda threads: rows[threads][0])
            fastest = min((threads for threads in rows if threads), key=lambda threads: rows[threads][1])
            print(
                f"indexed_bzip2 / stdlib: stream {rows[0][0] / rows[best][0]:.2f}x ({best} threads), "
                f"records {rows[0][1] / rows[fastest][1]:.2f}x ({fastest} threads)"
            )
        else:
            print("indexed_bzip2 is not installed (pip install 'ragbench[fast]'): the stdlib alone")


if __name__ == "__main__":
    main()
