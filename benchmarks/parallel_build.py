"""Build time of `ragbench index build --ray` with 1 and 2 workers against the one-process build, on a generated
corpus, and the check that the three indexes are the same files.

Each kind (bm25, lucene_bm25 by default) is built three times from the same corpus: without --ray, then on a Ray of
this machine with 1 and with 2 workers (Ray's start is included in neither figure: it is started once, first).
Printed: seconds per build, the speed-up over the one-process build, whether the files are byte-equal (the
manifest's clock fields aside), and the load average.

    python benchmarks/parallel_build.py                      # 200,000 passages, ~10 min on a 2-vCPU VM
    python benchmarks/parallel_build.py --passages 20000     # ~1 min
    python benchmarks/parallel_build.py --quick              # 2,000 passages of bm25: the script runs (a test's check)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import tempfile
import time
from pathlib import Path

from ragbench._registry import installed_registry
from ragbench._retrieval.index.building import build_index
from ragbench._retrieval.sharding.merged_build.build import build_parallel

WORDS = [f"w{i}" for i in range(5000)] + ["the", "of", "castle", "king", "über", "東京"]
VARYING = ("build_seconds", "built_at")


def write_corpus(path: Path, passages: int, seed: int = 0) -> Path:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(passages):
            text = " ".join(rng.choices(WORDS, k=rng.randint(20, 100)))
            handle.write(json.dumps({"id": str(i), "title": f"T{i % 97}", "text": text}, ensure_ascii=False) + "\n")
    return path


def files(folder: Path) -> dict[str, object]:
    found: dict[str, object] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if path.name == "manifest.json":
            found[path.name] = {k: v for k, v in json.loads(path.read_text()).items() if k not in VARYING}
        else:
            found[str(path.relative_to(folder))] = path.read_bytes()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=200_000)
    parser.add_argument("--chunk-size", type=int, default=10_000, help="passages a block")
    parser.add_argument("--kinds", default="bm25,lucene_bm25")
    parser.add_argument("--quick", action="store_true", help="2,000 passages of bm25 in blocks of 500")
    args = parser.parse_args()
    if args.quick:
        args.passages, args.chunk_size, args.kinds = 2000, 500, "bm25"
    unequal = []
    import ray
    from sharded_search import local_cluster

    with contextlib.ExitStack() as ray_started:
        if args.quick:  # the same one node of 2 CPUs, its head without the monitors (sharded_search.QUICK_HEAD)
            ray_started.enter_context(local_cluster(1, 2, quick=True))
        else:
            ray.init(address="local", include_dashboard=False, log_to_driver=False, num_cpus=2)
            ray_started.callback(ray.shutdown)
        registry = installed_registry()
        with tempfile.TemporaryDirectory() as tmp:
            corpus = write_corpus(Path(tmp) / "corpus.jsonl", args.passages)
            print(f"{args.passages} passages, blocks of {args.chunk_size}; {os.cpu_count()} CPUs")
            for kind in args.kinds.split(","):
                build = {"chunk_size": args.chunk_size, "progress": False}
                started = time.perf_counter()
                build_index(corpus, Path(tmp) / f"{kind}-1p", kind, {}, registry=registry, **build)
                timings = {"one process": time.perf_counter() - started}
                for workers in (1, 2):
                    started = time.perf_counter()
                    build_parallel(
                        corpus, Path(tmp) / f"{kind}-{workers}w", kind, {}, ray_address=None, workers=workers,
                        shards=None, registry=registry, **build,
                    )  # fmt: skip
                    timings[f"--ray --workers {workers}"] = time.perf_counter() - started
                reference = files(Path(tmp) / f"{kind}-1p")
                equal = all(files(Path(tmp) / f"{kind}-{w}w") == reference for w in (1, 2))
                for label, seconds in timings.items():
                    speedup = timings["one process"] / seconds
                    print(f"{kind:12s} {label:20s} {seconds:7.1f} s  x{speedup:.2f}")
                print(f"{kind:12s} files equal to the one-process build: {equal}; load average {os.getloadavg()}")
                unequal += [] if equal else [kind]
    if unequal:
        raise SystemExit(f"parallel_build: the --ray build of {', '.join(unequal)} differs from the one-process build")


if __name__ == "__main__":
    main()
