"""A page index (`siglip`, or `colpali` where colpali-engine is installed) built in one process and encoded in S
shards on Ray (`ragbench index build --retriever siglip --ray --shards S`): pages/s of each build, from the call
to the index in place (a shard's worker opens the dataset and loads the model itself: counted; the one-process
build's imports are not: a first build off the clock), and whether every sharded build wrote the one-process
build's vectors file byte for byte.

Pages are drawn as `vidore_pages.py` draws them (a ViDoRe V2 corpus of PNG pages). The model: `--model` (a local
folder), default the tiny random-weight SigLIP of the tests (tests/data/vidore/tiny-siglip). The sharded builds run on
a local Ray of `max(--shards)` CPUs started once (its start not counted); `--quick` encodes its shards in this
process instead (InProcess: no Ray), which checks the bytes, not the speed.

Run: python benchmarks/pages_shards.py [--model DIR] [--retriever siglip] [--pages 96] [--size 448] [--batch 4]
     [--shards 2,4]
     python benchmarks/pages_shards.py --quick   (12 pages of 64 pixels, 2 shards, in process)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from functools import partial
from pathlib import Path

from vidore_pages import draw_pages

from ragbench._registry import Registry
from ragbench._retrieval.pages.build import build_page_index
from ragbench._retrieval.pages.shards import PageShards
from ragbench._retrieval.sharding.build.runner import InProcess, RayTasks
from ragbench.testing import installed_registry

TINY_SIGLIP = Path(__file__).resolve().parents[1] / "tests" / "data" / "vidore" / "tiny-siglip"


def timed_build(
    registry: Registry, kind: str, corpus: Path, out: Path, options: dict, shards: PageShards | None
) -> float:
    started = time.perf_counter()
    build_page_index(kind, str(corpus), str(out), options, registry=registry, shards=shards)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(TINY_SIGLIP))
    parser.add_argument("--retriever", default="siglip", choices=["siglip", "colpali"])
    parser.add_argument("--pages", type=int, default=96)
    parser.add_argument("--size", type=int, default=448)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--shards", default="2,4", help="shard counts, comma-separated")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.pages, args.size, args.shards = 12, 64, "2"
    counts = [int(count) for count in args.shards.split(",")]
    registry = installed_registry()
    options = {"model": args.model, "batch_size": args.batch}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        draw_pages(folder / "pages", args.pages, args.size)
        timed_build(
            registry, args.retriever, folder / "pages", folder / "warm", options, None
        )  # imports, off the clock
        one = timed_build(registry, args.retriever, folder / "pages", folder / "one", options, None)
        rows = [("1 (one process)", one, True)]
        if not args.quick:
            import ray

            ray.init(address="local", num_cpus=max(counts), include_dashboard=False, log_to_driver=False)
        try:
            for count in counts:
                runner = InProcess if args.quick else partial(RayTasks, None, None)
                out = folder / f"in_{count}"
                seconds = timed_build(
                    registry, args.retriever, folder / "pages", out, options, PageShards(count, runner)
                )
                same = (out / "vectors.safetensors").read_bytes() == (
                    folder / "one" / "vectors.safetensors"
                ).read_bytes()
                rows.append((f"{count}" + (" (in process)" if args.quick else " (Ray tasks)"), seconds, same))
        finally:
            if not args.quick:
                ray.shutdown()
    print(f"{args.retriever} index of {args.pages} pages of {args.size}x{args.size}, batch {args.batch}, {args.model}")
    print("| shards | seconds | pages/s | vectors = one-process build's |")
    print("|---|---:|---:|---|")
    for label, seconds, same in rows:
        print(f"| {label} | {seconds:.2f} | {args.pages / seconds:.1f} | {'yes' if same else 'NO'} |")
    print(f"load average: {' '.join(f'{value:.2f}' for value in os.getloadavg())}, {os.cpu_count()} CPUs")
    if not all(same for _, _, same in rows):
        raise SystemExit("a sharded build's vectors differ from the one-process build's")


if __name__ == "__main__":
    main()
