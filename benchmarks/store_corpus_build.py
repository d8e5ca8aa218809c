"""A shard-parallel `lucene_bm25` build whose corpus is an object of a store, against the same build of the local
file, in one run: `ragbench index build --ray ADDRESS --shards S --corpus s3://bench/corpus.jsonl` and `--corpus
corpus.jsonl`, on a local Ray cluster of a head of 0 CPUs and S nodes of 1 CPU (build_throughput.py's), the store
moto's S3 server on 127.0.0.1 (the test extra's; its endpoint and dummy credentials in the environment of the
builds and of the cluster's workers). Each build is a process of its own, as a user runs it.

Prints each build's wall seconds and each Ray worker's peak memory (VmHWM of the `ray::` processes), the ratio
store/local of the wall times, and the load average. The corpus: sharded_search.py's synthetic passages.

    python benchmarks/store_corpus_build.py                  # 2x10^5 passages, 3 shards: ~5 min on a busy 2-vCPU VM
    python benchmarks/store_corpus_build.py --passages 50000 --repeats 2
    python benchmarks/store_corpus_build.py --quick          # 2,000 passages, 2 shards on a head of 2 CPUs alone

Ray puts the driver's working folder on its workers' path: run it from the checkout whose build is measured.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from build_throughput import best, load, ragbench_build, start_cluster
from sharded_search import machine, write_corpus

BUCKET = "bench"


def start_store(cache: Path) -> Any:
    """moto's S3 server on 127.0.0.1 with the bucket `bench`, this process's environment (and so the cluster's and
    the builds') pointed at it."""
    from moto.server import ThreadedMotoServer
    from s3fs import S3FileSystem

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line a request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    urllib.request.urlopen(urllib.request.Request(f"http://{host}:{port}/moto-api/reset", method="POST")).close()
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_ENDPOINT_URL=f"http://{host}:{port}",
        RAGBENCH_CACHE_DIR=str(cache),
    )
    S3FileSystem(skip_instance_cache=True).mkdir(BUCKET)
    return server


def upload(corpus: Path) -> str:
    from s3fs import S3FileSystem

    S3FileSystem(skip_instance_cache=True).put_file(str(corpus), f"{BUCKET}/{corpus.name}")
    return f"s3://{BUCKET}/{corpus.name}"


def report(label: str, figures: dict[str, Any]) -> None:
    tasks = [w for w in figures.get("workers", []) if w["cpu_s"] > 0]
    peaks = ", ".join(f"{w['peak_mb']:.0f}" for w in tasks)
    # not the build's own peak: a process this script starts inherits its resident memory as its first ru_maxrss
    print(f"{label:6s} wall {figures['wall_s']:7.1f} s; Ray workers' peak {peaks or '-'} MB; load {figures['load']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=200_000)
    parser.add_argument("--shards", type=int, default=3, help="shards, and the cluster's nodes of 1 CPU")
    parser.add_argument("--chunk-size", type=int, default=10_000, help="passages a block")
    parser.add_argument("--vocabulary", type=int, default=5000, help="words of the corpus's Zipf-like vocabulary")
    parser.add_argument(
        "--sources", default="local,store", help="the builds: of the local file, from the store; one: in one process"
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs of each build; the least wall time counts")
    parser.add_argument(
        "--quick", action="store_true", help="2,000 passages, 2 shards on a head of 2 CPUs alone (2 nodes fewer)"
    )
    args = parser.parse_args()
    if args.quick:
        args.passages, args.shards, args.chunk_size = 2000, 2, 500
    sources = args.sources.split(",")
    print(f"machine: {machine()}; load average {load()}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus = work / "corpus.jsonl"
        write_corpus(corpus, args.passages, args.vocabulary)
        server = start_store(work / "cache")
        cluster = None
        try:
            url = upload(corpus)
            cluster = start_cluster(0, cpus=args.shards, quick=True) if args.quick else start_cluster(args.shards)
            figures = {}
            for label in sources:
                source, ray = {"one": (str(corpus), None), "local": (str(corpus), cluster.address)}.get(
                    label, (url, cluster.address)
                )
                runs = [
                    ragbench_build(source, work / "index", args.chunk_size, ray, args.shards, args.shards)
                    for _ in range(args.repeats)
                ]
                figures[label] = best(runs)
                report(label, figures[label])
        finally:
            if cluster is not None:
                cluster.shutdown()
            server.stop()
    if {"local", "store"} <= set(figures):
        ratio = figures["store"]["wall_s"] / figures["local"]["wall_s"]
        print(f"{args.passages:,} passages, {args.shards} shards: store/local wall {ratio:.2f}x")


if __name__ == "__main__":
    main()
