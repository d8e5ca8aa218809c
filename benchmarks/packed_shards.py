"""Shards packed several an actor (more shards than the cluster's CPUs) against one actor a shard, on a local Ray
cluster of 3 nodes of one CPU each (`ray.cluster_utils.Cluster`, all on this machine): the same index split into
3 shards (3 actors, one shard each) and into 6 and 9 (3 actors serving 2 and 3 shards each), each searched through
`--retriever-arg shards=S` (the run's real path); the answers must equal the unsharded index's. Printed: the best
time of a batch of queries (of 3, after a warm one) and the queries a second, each layout and the unsharded index
in this process, with the machine's load average: on one machine the nodes share its cores, so the ratio measures
what packing costs (one actor searching its shards one after the other, more answers to merge), not a cluster's
speed-up.

    python benchmarks/packed_shards.py                  # 100,000 bm25 passages (a few minutes on 2 loaded cores)
    python benchmarks/packed_shards.py --kind lucene_bm25 --passages 200000 --work-dir ../packed
    python benchmarks/packed_shards.py --quick          # 5000 passages, 2 and 4 shards on one node of 2 CPUs: seconds
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from sharded_search import QUERIES, K, best_time, closed, local_cluster, machine, sparse_queries, write_corpus

from ragbench._registry import installed_registry
from ragbench._retrieval import load_retriever
from ragbench._retrieval.index.building import build_index
from ragbench._retrieval.sharding.split import split_index

NODES = 3
LAYOUTS = (3, 6, 9)  # shards: one actor a shard, then 2 and 3 shards an actor
QUICK_CPUS, QUICK_LAYOUTS = 2, (2, 4)  # one node: one actor a shard, then 2 an actor


def measure(kind: str, work: Path, passages: int, layouts: tuple[int, ...]) -> list[str]:
    """The lines of each layout's figures, the answers checked equal to the unsharded index's."""
    corpus = work / f"corpus-{passages}.jsonl"
    write_corpus(corpus, passages)
    registry = installed_registry()
    index = work / f"{kind}-{passages}"
    if not index.exists():
        build_index(corpus, index, kind, {}, progress=False, registry=registry)
    queries = sparse_queries()
    whole = load_retriever(kind, {"index": str(index)}, registry=registry)
    expected = [[(d.id, d.score) for d in row] for row in whole.search(queries, K)]
    alone = best_time(lambda: whole.search(queries, K))
    lines = [f"{kind}, {passages} passages, {QUERIES} queries, k={K}: unsharded in this process {alone * 1000:.0f} ms"]
    whole.close()
    for shards in layouts:
        if not (index / f"shards-{shards}").is_dir():
            split_index(index, shards, registry=installed_registry())
        sharded = load_retriever(kind, {"index": str(index), "shards": shards}, registry=registry)
        got = [[(d.id, d.score) for d in row] for row in sharded.search(queries, K)]
        assert got == expected, f"{shards} shards of {kind} answer differently from the unsharded index"
        seconds = best_time(lambda retriever=sharded: retriever.search(queries, K))
        groups = sharded.pool.groups
        lines.append(
            f"  {shards} shards on {len(groups)} actors ({max(map(len, groups))} an actor), "
            f"{len(set(sharded.pool.nodes))} nodes: {seconds * 1000:.0f} ms a batch, {QUERIES / seconds:.0f} "
            f"queries/s ({seconds / alone:.2f}x unsharded); answers equal; load average "
            f"{[round(x, 1) for x in os.getloadavg()]}"
        )
        closed(sharded.close)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--kind", default="bm25", choices=("bm25", "lucene_bm25"))
    parser.add_argument("--work-dir", type=Path, help="keep the corpus, the index and its splits here, reused")
    parser.add_argument("--quick", action="store_true", help="5000 passages on one node of 2 CPUs: 2 shards, 4")
    args = parser.parse_args()
    passages, layouts = (5000, QUICK_LAYOUTS) if args.quick else (args.passages, LAYOUTS)

    print(f"machine: {machine()}", flush=True)
    with local_cluster(*((1, QUICK_CPUS, True) if args.quick else (NODES, 1))), tempfile.TemporaryDirectory() as tmp:
        work = args.work_dir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        print("\n".join(measure(args.kind, work, passages, layouts)), flush=True)


if __name__ == "__main__":
    main()
