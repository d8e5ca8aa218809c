"""Shards, memory per node and build time of wiki-18 (21,015,324 passages) and MS MARCO v2.1 segmented
(113,520,750) on N nodes, projected from measured rates; nothing in the table is typed in by hand.

Inputs, each printed with the machine it was measured on:
- search memory, from `benchmarks/sharded_search.py --json-out` (`--figures`, default the 10^6-passage figures
  committed beside this script): each kind's peak resident memory (VmHWM) of the one-index actor (N passages) and
  of each of S shard actors (N/S) give a line, memory = fixed + per-passage x passages, the fixed part being the
  Ray worker, libraries and what every shard holds whole (bm25's vocabulary). One shard a node: a node holds
  fixed + per-passage x passages/nodes. Index bytes on disk per passage from the same figures.
- build rates, measured here on a sample of the same synthetic corpus (`--sample`, one process per kind): a
  parallel build's work split as `index build --ray` splits it, timed in CPU seconds (so another job's load does
  not enter): the workers' part (each block analysed: tokenizing, Lucene analysis) and the driver's part (reading
  the corpus, the docs store, merging each block into the index, writing it), which stays serial on the head;
  then `index shard`'s split (serial too), and the driver's peak memory per passage (the builder holds the
  postings until it writes them): what a build of the whole sample adds to the peak of a build of its half, over
  the other half's passages. Build time on N nodes = passages x (driver + split + worker / (N x
  --cores-per-node)) CPU seconds: each worker a core as fast as the one measured.
- faiss (FlashRAG's e5-base Flat, 768 float32 dimensions): its vectors must be encoded; the encoder's rate is not
  measured here unless given (`--encode-rate`, passages/s of one GPU worker, e.g. from a GPU node), so its build
  time is printed only then.

Synthetic passages (20-100 words of a 5,000-word Zipf vocabulary): a real corpus's vocabulary (wiki-18: millions of
terms) is whole in every bm25 shard and adds to the fixed part; the per-passage parts scale with words per passage
(wiki-18's are 100 words, MS MARCO v2.1 segments ~ 100-150 words: about 2x these 60 on average).

    python benchmarks/scale_projection.py                       # ~5 min on a 2-vCPU VM (a 50,000-passage sample)
    python benchmarks/scale_projection.py --quick               # a 2,000-passage sample of bm25: the script runs
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from sharded_search import MB, folder_bytes, machine, write_corpus

CORPORA = {"wiki-18": 21_015_324, "MS MARCO v2.1 segmented": 113_520_750}
NODES = (4, 8, 16, 32)
FIGURES = Path(__file__).with_name("figures") / "sharded_search_1m.json"
GB = 1 << 30


def peak_mb() -> float:
    """This process's peak resident memory so far (VmHWM), MB."""
    status = Path("/proc/self/status").read_text().splitlines()
    return int(next(line for line in status if line.startswith("VmHWM")).split()[1]) * 1024 / MB


def build_sample(kind: str, corpus: str, half: str, warm: str, out: str, chunk_size: int) -> dict[str, float]:
    """A `kind` build of `corpus` in this (fresh) process, its blocks analysed as `index build --ray`'s workers
    analyse them and merged as its driver merges them, each part's CPU seconds counted; then split in 4. The
    `warm` corpus (imports, loaded tables) and the `half` one are built first: the peak memory the second half of
    the passages adds is the driver's memory a passage, without its fixed part."""
    from ragbench._registry import installed_registry
    from ragbench._retrieval.index.building import build_index
    from ragbench._retrieval.sharding.kind_lookup import sharded_kind
    from ragbench._retrieval.sharding.merged_build.analysis import BlockAnalyser
    from ragbench._retrieval.sharding.split import split_index

    registry = installed_registry()
    blocks = sharded_kind(registry, kind)  # its blocks: a merged build's settings, worker and absorb
    worker = [0.0]

    def feeder(builder: Any, chunks: Any) -> None:
        analyser = None
        for block in chunks:
            if analyser is None:
                analyser = BlockAnalyser(blocks, blocks.settings(builder, block[0], registry))
            started = time.process_time()
            arrays = analyser.arrays(block)
            worker[0] += time.process_time() - started
            blocks.absorb(builder, arrays)

    build = {"chunk_size": chunk_size, "progress": False, "registry": registry, "feeder": feeder}
    build_index(warm, f"{out}-warm", kind, {}, **build)
    build_index(half, f"{out}-half", kind, {}, **build)
    worker[0] = 0.0
    before = peak_mb()
    started = time.process_time()
    build_index(corpus, out, kind, {}, **build)
    total = time.process_time() - started
    build_peak = peak_mb() - before
    started = time.process_time()
    split_index(Path(out), 4, registry=registry)
    split = time.process_time() - started
    return {"worker_cpu_s": worker[0], "driver_cpu_s": total - worker[0], "split_cpu_s": split, "peak_mb": build_peak}


def measure_builds(kinds: list[str], passages: int, chunk_size: int) -> dict[str, dict[str, float]]:
    """Per kind: CPU seconds a passage of the workers, the driver and the split; the driver's MB a passage."""
    rates = {}
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        write_corpus(corpus, passages)
        write_corpus(Path(tmp) / "warm.jsonl", 1000)
        write_corpus(Path(tmp) / "half.jsonl", passages // 2)
        spawn = multiprocessing.get_context("spawn")
        for kind in kinds:
            with ProcessPoolExecutor(1, mp_context=spawn) as pool:
                paths = (str(Path(tmp) / name) for name in ("corpus.jsonl", "half.jsonl", "warm.jsonl", kind))
                got = pool.submit(build_sample, kind, *paths, chunk_size).result()
            rates[kind] = {
                "worker_s": got["worker_cpu_s"] / passages,
                "driver_s": got["driver_cpu_s"] / passages,
                "split_s": got["split_cpu_s"] / passages,
                "driver_mb": got["peak_mb"] / (passages - passages // 2),
                "index_bytes": folder_bytes(Path(tmp) / kind) / passages,
            }
    return rates


def memory_line(figures: dict[str, Any], kind: str) -> tuple[float, float]:
    """(fixed MB, MB a passage) of a shard actor's peak memory, through the one-index actor's and the mean shard's."""
    passages, shards = figures["passages"], figures["shards"]
    found = figures["kinds"][kind]
    whole = max(peak for peak, _, _ in found["memory_1"])
    each = sum(peak for peak, _, _ in found[f"memory_{shards}"]) / shards
    per_passage = (whole - each) / (passages - passages / shards)
    return whole - per_passage * passages, per_passage


def duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def projection_rows(
    figures: dict[str, Any], rates: dict[str, dict[str, float]], cores: int, encode_rate: float | None, dim: int
) -> list[str]:
    rows = []
    for kind in figures["kinds"]:
        fixed, per_passage = memory_line(figures, kind)
        scale = dim / figures["dim"] if kind in ("faiss_index", "dense") else 1.0  # vectors' bytes go with dim
        bytes_each = figures["kinds"][kind]["index_bytes"] / figures["passages"] * scale
        for corpus, passages in CORPORA.items():
            for nodes in NODES:
                node_gb = (fixed + per_passage * scale * passages / nodes) * MB / GB
                if kind in rates:
                    r = rates[kind]
                    serial = passages * (r["driver_s"] + r["split_s"])
                    build = duration(serial + passages * r["worker_s"] / (nodes * cores))
                    head = f"{r['driver_mb'] * passages * MB / GB:.0f} GB"
                elif kind == "faiss_index" and encode_rate:
                    build, head = duration(passages / (encode_rate * nodes)), "-"
                elif kind in ("faiss_index", "dense"):
                    build, head = "encoder rate not measured", "-"
                else:
                    build, head = "not measured (--kinds)", "-"
                rows.append(
                    f"| {kind} | {corpus} | {nodes} | {nodes} | {node_gb:.1f} GB | {passages * bytes_each / GB:.0f} GB "
                    f"| {build} | {head} |"
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figures", type=Path, default=FIGURES, help="sharded_search.py --json-out's figures")
    parser.add_argument("--sample", type=int, default=50_000, help="passages of the build sample")
    parser.add_argument("--chunk-size", type=int, default=10_000, help="passages a block of the sample's build")
    parser.add_argument("--kinds", default="bm25,lucene_bm25", help="kinds whose build is measured on the sample")
    parser.add_argument("--cores-per-node", type=int, default=4, help="build workers a node (one a core)")
    parser.add_argument("--encode-rate", type=float, help="passages/s one GPU encodes (faiss's build time)")
    parser.add_argument("--dim", type=int, default=768, help="vector dimensions of the projected faiss index")
    parser.add_argument("--quick", action="store_true", help="a 2,000-passage sample of bm25 (the script runs)")
    args = parser.parse_args()
    if args.quick:
        args.sample, args.chunk_size, args.kinds = 2000, 500, "bm25"
    try:
        figures = json.loads(args.figures.read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(
            f"scale_projection: --figures {args.figures}: {exc}; run benchmarks/sharded_search.py --json-out"
        ) from None
    here = machine() | {"load_average": [round(x, 1) for x in os.getloadavg()]}
    print(f"search figures: {args.figures}: {figures['passages']:,} passages, {figures['shards']} shards, measured on")
    print(f"  {figures['machine']}")
    for kind in figures["kinds"]:
        fixed, per_passage = memory_line(figures, kind)
        index = figures["kinds"][kind]["index_bytes"] / figures["passages"]
        print(
            f"  {kind}: shard actor peak memory {fixed:.0f} MB + {per_passage * MB:.0f} B a passage; "
            f"index {index:.0f} B a passage on disk" + (f" ({figures['dim']} dimensions)" if "faiss" in kind else "")
        )
    rates = measure_builds(args.kinds.split(","), args.sample, args.chunk_size)
    print(f"build rates: a sample of {args.sample:,} passages, blocks of {args.chunk_size:,}, measured on {here}")
    for kind, r in rates.items():
        print(
            f"  {kind}: CPU us a passage: workers {r['worker_s'] * 1e6:.0f} ({1 / r['worker_s']:.0f} passages/s a "
            f"worker), driver {r['driver_s'] * 1e6:.0f}, split {r['split_s'] * 1e6:.0f}; driver's build memory "
            f"{r['driver_mb'] * MB:.0f} B a passage; index {r['index_bytes']:.0f} B a passage"
        )
    print(f"assumed: one shard a node, {args.cores_per_node} build workers a node; faiss at {args.dim} dimensions")
    if args.encode_rate:
        print(f"  faiss build: encoding at {args.encode_rate:.0f} passages/s a node (--encode-rate, one GPU a node)")
    print(
        "\n| kind | corpus | nodes | shards | memory a node (search) | index on disk | build time | head's build memory |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(projection_rows(figures, rates, args.cores_per_node, args.encode_rate, args.dim)))


if __name__ == "__main__":
    main()
