"""Sharded search (ragbench._retrieval.sharded) against the unsharded index, on a local Ray cluster of S nodes of
one CPU each (`ray.cluster_utils.Cluster`, all on this machine): the answers must be equal; printed are the time of
a batch of queries and each shard process's memory.

- bm25, lucene_bm25, flashrag_bm25: an index of N synthetic passages (random words of a Zipf-like vocabulary)
  built by `ragbench index build`'s code, split into S shards, searched through `--retriever-arg shards=S` (the
  run's real path) and unsharded.
- dense: N random float16 vectors of 384 dimensions (an index's embeddings.npy), split into S shards and searched
  by their actors; unsharded: `dense.inner_product_top_k` in this process. Query encoding is left out (the run
  encodes once, sharded or not).
- faiss_index: N random float32 vectors of 384 dimensions in a flat inner-product faiss index (FlashRAG's Flat),
  split by `ragbench index shard`, its shards searched by their actors; unsharded: the faiss index.

Memory: each shard actor's resident memory after the searches (RssAnon, what it holds itself, and RssFile, the
pages of its shard's memory-mapped files it touched), read from /proc; the 1-shard layout (one actor serving the
whole index) is the unsharded figure. On one machine the S nodes share its cores, so the time ratio measures the
sharding's overhead (Ray calls, merging), not the speed-up of S machines.

    python benchmarks/sharded_search.py              # N=200000, S=3, ~40 min on 2 loaded cores (lucene_bm25 builds in Python)
    python benchmarks/sharded_search.py --quick      # N=5000, S=2, bm25 and dense: well under a minute
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import psutil

from ragbench._registry import installed_registry
from ragbench._retrieval import load_retriever
from ragbench._retrieval.dense.retriever import inner_product_top_k
from ragbench._retrieval.index.built import build_index
from ragbench._retrieval.sharded.actors import ShardPool
from ragbench._retrieval.sharded.layout import Layout, Shard, read_layout
from ragbench._retrieval.sharded.merge import merge_top_k, shard_ranges
from ragbench._retrieval.sharded.split import split_dense, split_index

K, QUERIES, DIM = 10, 64, 384
MB = 1 << 20


def shard_processes() -> list[psutil.Process]:
    """The live shard actor processes of this script's own cluster (its raylets are its children)."""
    return [
        process
        for process in psutil.Process().children(recursive=True)
        if process.is_running()
        and process.status() != psutil.STATUS_ZOMBIE
        and any("_ShardActor" in part for part in process.cmdline())
    ]


def shard_memory() -> list[tuple[float, float]]:
    """(RssAnon MB, RssFile MB) of each live shard actor process."""
    found = []
    for process in shard_processes():
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{process.pid}/status").read_text().splitlines())
        found.append(tuple(int(fields[key].split()[0]) * 1024 / MB for key in ("RssAnon", "RssFile")))
    return sorted(found)


def closed(close) -> None:
    """`close` a pool, then wait until its actors' processes are gone (ray.kill returns at once)."""
    close()
    psutil.wait_procs(shard_processes(), timeout=60)


def best_time(search, repeats: int = 3) -> float:
    search()  # warm
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        search()
        times.append(time.perf_counter() - started)
    return min(times)


def write_corpus(folder: Path, passages: int) -> list[str]:
    """N synthetic passages (random words of a Zipf-like vocabulary) in FlashRAG's JSONL form; the queries."""
    rng = np.random.default_rng(0)
    vocabulary = [f"w{i}" for i in range(5000)]
    weights = 1 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    with open(folder / "corpus.jsonl", "w") as handle:
        for i in range(passages):
            words = rng.choice(vocabulary, size=rng.integers(20, 100), p=weights)
            handle.write(json.dumps({"id": str(i), "contents": " ".join(words)}) + "\n")
    return [" ".join(rng.choice(vocabulary, size=4, p=weights)) for _ in range(QUERIES)]


def sparse_case(kind: str, folder: Path, passages: int, shards: int) -> dict:
    """A `kind` index (bm25, lucene_bm25, flashrag_bm25) searched through `--retriever-arg shards=S`, the run's
    real path, and unsharded."""
    queries = write_corpus(folder, passages)
    registry = installed_registry()
    options = {"language": "en"} if kind == "flashrag_bm25" else {}
    build_index(folder / "corpus.jsonl", folder / kind, kind, options, progress=False, registry=registry)
    args = {
        "index": str(folder / kind),
        **({"corpus": str(folder / "corpus.jsonl")} if kind == "flashrag_bm25" else {}),
    }
    results = {}
    whole = load_retriever(kind, args, registry=registry)
    expected = [[(d.id, d.score) for d in row] for row in whole.search(queries, K)]
    results["unsharded_s"] = best_time(lambda: whole.search(queries, K))
    for count in (1, shards):
        split_index(folder / kind, count)
        sharded = load_retriever(kind, {**args, "shards": count}, registry=registry)
        got = [[(d.id, d.score) for d in row] for row in sharded.search(queries, K)]
        assert got == expected, f"sharded {kind} answers differ from the unsharded index"
        results[f"sharded_{count}_s"] = best_time(lambda retriever=sharded: retriever.search(queries, K))
        results[f"memory_{count}"] = shard_memory()
        results[f"nodes_{count}"] = len(set(sharded.pool.nodes))
        closed(sharded.close)
    whole.close()
    return results


def faiss_case(folder: Path, passages: int, shards: int) -> dict:
    """A flat inner-product faiss index (FlashRAG's Flat) of N random float32 vectors split by `ragbench index
    shard`, its shards searched by their actors; unsharded: the faiss index in this process. Encoding left out."""
    import faiss

    rng = np.random.default_rng(2)
    whole = faiss.IndexFlatIP(DIM)
    for start in range(0, passages, 50_000):
        block = rng.standard_normal((min(50_000, passages - start), DIM), dtype=np.float32)
        whole.add(block / np.linalg.norm(block, axis=1, keepdims=True))
    faiss.write_index(whole, str(folder / "e5_Flat.index"))
    queries = rng.standard_normal((QUERIES, DIM), dtype=np.float32)
    expected = whole.search(queries, K)
    results = {"unsharded_s": best_time(lambda: whole.search(queries, K))}
    for count in (1, shards):
        layout = read_layout(split_index(folder / "e5_Flat.index", count), folder / "e5_Flat.index")
        pool = ShardPool(layout, {"mmap": True})  # --retriever-arg mmap=true: the vectors left on disk, mapped
        results |= vector_pool_figures(pool, queries, expected, count)
    return results


def dense_case(folder: Path, passages: int, shards: int) -> dict:
    rng = np.random.default_rng(1)
    matrix = np.lib.format.open_memmap(folder / "embeddings.npy", "w+", np.float16, (passages, DIM))
    for start in range(0, passages, 50_000):
        block = rng.standard_normal((min(50_000, passages - start), DIM), dtype=np.float32)
        matrix[start : start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    matrix.flush()
    del matrix
    queries = rng.standard_normal((QUERIES, DIM), dtype=np.float32)
    embeddings = np.load(folder / "embeddings.npy", mmap_mode="r")
    expected = inner_product_top_k(queries, embeddings, K)
    results = {"unsharded_s": best_time(lambda: inner_product_top_k(queries, embeddings, K))}
    for count in (1, shards):
        ranges = shard_ranges(passages, count)
        folders = [folder / f"dense-{count}-{i}" for i in range(count)]
        for shard_folder in folders:
            shard_folder.mkdir()
        split_dense(folder, folders, ranges)
        layout = Layout(folder, "dense", passages, [Shard(i, f, *r) for i, (f, r) in enumerate(zip(folders, ranges))])
        pool = ShardPool(layout, {"chunk_rows": 32768, "backend": "numpy"})
        results |= vector_pool_figures(pool, queries, expected, count)
    return results


def vector_pool_figures(pool: ShardPool, queries: np.ndarray, expected: tuple, count: int) -> dict:
    """A vector index's shard pool checked against the unsharded (scores, ids), timed, its memory read; then closed."""

    def search() -> list:
        answers = pool.top_k(queries, K)
        return [merge_top_k([answer[q] for answer in answers], K) for q in range(QUERIES)]

    for row, (scores, ids) in enumerate(search()):
        assert ids.tolist() == expected[1][row].tolist() and scores.tobytes() == expected[0][row].tobytes()
    figures = {f"sharded_{count}_s": best_time(search), f"memory_{count}": shard_memory()}
    figures[f"nodes_{count}"] = len(set(pool.nodes))
    closed(pool.close)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=200_000)
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--kinds", default="bm25,lucene_bm25,flashrag_bm25,dense,faiss_index")
    parser.add_argument("--quick", action="store_true", help="5000 passages, 2 shards, bm25 and dense")
    args = parser.parse_args()
    passages, shards = (5000, 2) if args.quick else (args.passages, args.shards)
    kinds = ("bm25", "dense") if args.quick else tuple(args.kinds.split(","))

    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    for _ in range(shards - 1):
        cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cases = {kind: partial(sparse_case, kind) for kind in ("bm25", "lucene_bm25", "flashrag_bm25")}
            cases |= {"dense": dense_case, "faiss_index": faiss_case}
            for name in kinds:
                case = cases[name]
                folder = Path(tmp) / name
                folder.mkdir()
                r = case(folder, passages, shards)
                one = ", ".join(f"anon {a:.0f} MB file {f:.0f} MB" for a, f in r["memory_1"])
                each = "; ".join(f"anon {a:.0f} MB file {f:.0f} MB" for a, f in r[f"memory_{shards}"])
                print(
                    f"{name}: {passages} passages, {QUERIES} queries, k={K}: answers equal; unsharded "
                    f"{r['unsharded_s'] * 1000:.0f} ms, 1 shard actor {r['sharded_1_s'] * 1000:.0f} ms, "
                    f"{shards} shards "
                    f"on {r[f'nodes_{shards}']} nodes {r[f'sharded_{shards}_s'] * 1000:.0f} ms "
                    f"({r[f'sharded_{shards}_s'] / r['unsharded_s']:.2f}x unsharded)\n"
                    f"  memory of the 1-shard actor: {one}\n  memory of each of the {shards} shard actors: {each}"
                )
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main()
