"""Sharded search (ragbench._retrieval.sharding) against the unsharded index, on a local Ray cluster of S nodes of
one CPU each (`ray.cluster_utils.Cluster`, all on this machine): the answers must be equal; printed are the time of
a batch of queries and each shard process's memory.

- bm25, lucene_bm25, flashrag_bm25: an index of N synthetic passages (20-100 random words of a Zipf-like
  vocabulary) built by `ragbench index build`'s code, split into S shards, searched through
  `--retriever-arg shards=S` (the run's real path) and unsharded.
- dense: N random unit float16 vectors of --dim dimensions (an index's embeddings.npy), split into S shards and
  searched by their actors; unsharded: `dense.inner_product_top_k` in this process.
- faiss_index: N random unit float32 vectors of --dim dimensions in a flat inner-product faiss index (FlashRAG's
  Flat; 768 is e5-base's), split by `ragbench index shard`, its shards searched by their actors (mmap=true);
  unsharded: the faiss index in this process.
The vectors are synthetic, not encoded: equal answers and search time do not depend on the encoder (the run
encodes each query once, sharded or not).

Memory: each shard actor's peak resident memory (VmHWM) and what it holds after the searches (RssAnon, its own,
and RssFile, the pages of its shard's memory-mapped files it touched), read from /proc. The 1-shard layout, one
actor serving the whole index, is the one-index process (the same code and Ray worker as a shard). On one machine
the S nodes share its cores, so the time ratio measures the sharding's overhead (Ray calls, merging), not the
speed-up of S machines.

`--work-dir DIR` keeps the corpus, the indexes and their splits in DIR (named by N and --dim) and reuses them: a
10^6-passage lucene_bm25 index takes a long while to build on a small machine. `--json-out FILE` writes the
figures for benchmarks/scale_projection.py (adding to those of an earlier run of the same N, S and --dim).

    python benchmarks/sharded_search.py              # N=200000, S=3, ~40 min on 2 loaded cores (lucene_bm25 builds in Python)
    python benchmarks/sharded_search.py --passages 1000000 --kinds bm25,lucene_bm25,faiss_index --dim 768 \
        --work-dir ../scale1m --json-out benchmarks/figures/sharded_search_1m.json   # the 10^6 figures
    python benchmarks/sharded_search.py --quick      # N=5000, S=2 on one node of 2 CPUs, bm25 and dense: seconds
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import numpy as np
import psutil

from ragbench._registry import installed_registry
from ragbench._retrieval import load_retriever
from ragbench._retrieval.dense.exact_search import inner_product_top_k
from ragbench._retrieval.index.building import build_index
from ragbench._retrieval.sharding.actors import ShardPool
from ragbench._retrieval.sharding.dense.split import split_dense
from ragbench._retrieval.sharding.kind_lookup import sharded_kind
from ragbench._retrieval.sharding.layout import Layout, Shard, read_layout
from ragbench._retrieval.sharding.merge import merge_top_k, shard_ranges
from ragbench._retrieval.sharding.split import split_index

K, QUERIES, DIM = 10, 64, 384
MB = 1 << 20
VOCABULARY = [f"w{i}" for i in range(5000)]
WEIGHTS = 1 / np.arange(1, len(VOCABULARY) + 1)
WEIGHTS /= WEIGHTS.sum()


def shard_processes() -> list[psutil.Process]:
    """The live shard actor processes of this script's own cluster (its raylets are its children)."""
    return [process for process in psutil.Process().children(recursive=True) if is_shard_actor(process)]


def is_shard_actor(process: psutil.Process) -> bool:
    """Whether `process` is a live shard actor; one that ends (or turns zombie) while it is read is not."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE and any("_ShardActor" in part for part in process.cmdline())
    except psutil.Error:
        return False


def shard_memory() -> list[list[float]]:
    """[peak RSS (VmHWM), RssAnon, RssFile] in MB of each live shard actor process, read from /proc: the peak is
    what the node needed at most (loading included); anon what the actor holds itself, file the pages of its
    shard's memory-mapped files it touched."""
    found = []
    for process in shard_processes():
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
        except OSError:  # it ended since it was listed
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines())
        found.append([int(fields[key].split()[0]) * 1024 / MB for key in ("VmHWM", "RssAnon", "RssFile")])
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


def folder_bytes(path: Path) -> int:
    """Bytes of an index file, or of an index folder's files outside its shards-S folders."""
    if path.is_file():
        return path.stat().st_size
    return sum(
        f.stat().st_size
        for f in path.rglob("*")
        if f.is_file() and not f.relative_to(path).parts[0].startswith("shards-")
    )


def write_corpus(path: Path, passages: int, vocabulary: int = len(VOCABULARY)) -> None:
    """N synthetic passages (20-100 random words of a Zipf-like vocabulary, of `vocabulary` words: w0, w1, ...) in
    FlashRAG's JSONL form, written in blocks; an existing file is kept (`--work-dir`)."""
    if path.is_file():
        return
    rng = np.random.default_rng(0)
    words_of, weights = VOCABULARY, WEIGHTS
    if vocabulary != len(VOCABULARY):
        words_of = [f"w{i}" for i in range(vocabulary)]
        weights = 1 / np.arange(1, vocabulary + 1)
        weights /= weights.sum()
    partial_path = path.with_suffix(".partial")
    with open(partial_path, "w") as handle:
        for start in range(0, passages, 100_000):
            lengths = rng.integers(20, 100, size=min(100_000, passages - start))
            words = rng.choice(len(words_of), size=int(lengths.sum()), p=weights)
            bounds = np.concatenate(([0], np.cumsum(lengths)))
            for offset in range(len(lengths)):
                text = " ".join(words_of[w] for w in words[bounds[offset] : bounds[offset + 1]])
                handle.write(json.dumps({"id": str(start + offset), "contents": text}) + "\n")
    partial_path.rename(path)


def sparse_queries() -> list[str]:
    rng = np.random.default_rng(1)
    return [" ".join(VOCABULARY[w] for w in rng.choice(len(VOCABULARY), size=4, p=WEIGHTS)) for _ in range(QUERIES)]


def sparse_case(kind: str, work: Path, passages: int, shards: int, dim: int) -> dict:
    """A `kind` index (bm25, lucene_bm25, flashrag_bm25) searched through `--retriever-arg shards=S`, the run's
    real path, and unsharded. The corpus and the index are built unless `work` has them."""
    corpus = work / f"corpus-{passages}.jsonl"
    write_corpus(corpus, passages)
    registry = installed_registry()
    options = {"language": "en"} if kind == "flashrag_bm25" else {}
    index = work / f"{kind}-{passages}"
    if not index.exists():
        build_index(corpus, index, kind, options, progress=False, registry=registry)
    args = {"index": str(index), **({"corpus": str(corpus)} if kind == "flashrag_bm25" else {})}
    queries = sparse_queries()
    whole = load_retriever(kind, args, registry=registry)
    expected = [[(d.id, d.score) for d in row] for row in whole.search(queries, K)]
    results = {"unsharded_s": best_time(lambda: whole.search(queries, K)), "index_bytes": folder_bytes(index)}
    if (index / "manifest.json").is_file():
        results["build_seconds"] = json.loads((index / "manifest.json").read_text())["build_seconds"]
    for count in (1, shards):
        split_index(index, count, registry=installed_registry())
        sharded = load_retriever(kind, {**args, "shards": count}, registry=registry)
        got = [[(d.id, d.score) for d in row] for row in sharded.search(queries, K)]
        assert got == expected, f"sharded {kind} answers differ from the unsharded index"
        results[f"sharded_{count}_s"] = best_time(lambda retriever=sharded: retriever.search(queries, K))
        results[f"memory_{count}"] = shard_memory()
        results[f"nodes_{count}"] = len(set(sharded.pool.nodes))
        closed(sharded.close)
    whole.close()
    return results


def write_faiss(path: Path, passages: int, dim: int) -> None:
    """A flat inner-product faiss index (FlashRAG's Flat) of N random unit float32 vectors; an existing file is
    kept (`--work-dir`). Written through a partial file renamed into place."""
    import faiss

    if path.is_file():
        return
    rng = np.random.default_rng(2)
    whole = faiss.IndexFlatIP(dim)
    for start in range(0, passages, 50_000):
        block = rng.standard_normal((min(50_000, passages - start), dim), dtype=np.float32)
        whole.add(block / np.linalg.norm(block, axis=1, keepdims=True))
    faiss.write_index(whole, str(path.with_suffix(".partial")))
    path.with_suffix(".partial").rename(path)


def faiss_case(work: Path, passages: int, shards: int, dim: int) -> dict:
    """A flat inner-product faiss index (FlashRAG's Flat) of N random unit float32 vectors split by `ragbench index
    shard`, its shards searched by their actors; unsharded: the faiss index in this process. No encoder: equal
    answers and search time do not depend on where the vectors came from."""
    import faiss

    path = work / f"flat-{passages}x{dim}.index"
    write_faiss(path, passages, dim)
    whole = faiss.read_index(str(path))
    queries = np.random.default_rng(3).standard_normal((QUERIES, dim), dtype=np.float32)
    expected = whole.search(queries, K)
    results = {"unsharded_s": best_time(lambda: whole.search(queries, K)), "index_bytes": folder_bytes(path)}
    whole.reset()  # its vectors freed before the shard actors load theirs
    for count in (1, shards):
        layout = read_layout(split_index(path, count, registry=installed_registry()), path)
        pool = ShardPool(
            layout, sharded_kind(installed_registry(), layout.retriever).search, {"mmap": True}
        )  # --retriever-arg mmap=true: the vectors left on disk, mapped
        results |= vector_pool_figures(pool, queries, expected, count)
    return results


def dense_case(work: Path, passages: int, shards: int, dim: int) -> dict:
    """N random unit float16 vectors (a dense index's embeddings.npy) split into S shards searched by their
    actors; unsharded: `dense.inner_product_top_k` in this process."""
    folder = work / f"dense-{passages}x{dim}"
    if not (folder / "embeddings.npy").is_file():
        folder.mkdir(exist_ok=True)
        rng = np.random.default_rng(1)
        matrix = np.lib.format.open_memmap(folder / "partial.npy", "w+", np.float16, (passages, dim))
        for start in range(0, passages, 50_000):
            block = rng.standard_normal((min(50_000, passages - start), dim), dtype=np.float32)
            matrix[start : start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
        matrix.flush()
        del matrix
        (folder / "partial.npy").rename(folder / "embeddings.npy")
    queries = np.random.default_rng(3).standard_normal((QUERIES, dim), dtype=np.float32)
    embeddings = np.load(folder / "embeddings.npy", mmap_mode="r")
    expected = inner_product_top_k(queries, embeddings, K)
    results = {
        "unsharded_s": best_time(lambda: inner_product_top_k(queries, embeddings, K)),
        "index_bytes": folder_bytes(folder),
    }
    for count in (1, shards):
        ranges = shard_ranges(passages, count)
        folders = [folder / f"shards-{count}" / f"{i:03d}" for i in range(count)]
        if not all((shard / "embeddings.npy").is_file() for shard in folders):
            for shard_folder in folders:
                shard_folder.mkdir(parents=True, exist_ok=True)
            split_dense(folder, folders, ranges)
        layout = Layout(folder, "dense", passages, [Shard(i, f, *r) for i, (f, r) in enumerate(zip(folders, ranges))])
        pool = ShardPool(
            layout,
            sharded_kind(installed_registry(), layout.retriever).search,
            {"chunk_rows": 32768, "backend": "numpy", "corpus_rows": passages},
        )  # the options the dense front gives its shards (`shard_options`): corpus_rows, so each shard scores its
        # rows in the whole corpus's blocks (zeros outside it), the same BLAS shapes, the same bits
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


def machine() -> dict:
    """The machine the figures were measured on: CPU model, cores, memory, load average."""
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        "unknown CPU",
    )
    return {"cpu": cpu, "cpus": os.cpu_count(), "memory_gib": round(psutil.virtual_memory().total / (1 << 30), 1)}


def report(name: str, r: dict, passages: int, shards: int) -> str:
    def each(memory: list[list[float]]) -> str:
        return "; ".join(f"peak {p:.0f} MB (anon {a:.0f}, file {f:.0f})" for p, a, f in memory)

    return (
        f"{name}: {passages} passages, {QUERIES} queries, k={K}: answers equal; unsharded "
        f"{r['unsharded_s'] * 1000:.0f} ms, 1 shard actor {r['sharded_1_s'] * 1000:.0f} ms, {shards} shards "
        f"on {r[f'nodes_{shards}']} nodes {r[f'sharded_{shards}_s'] * 1000:.0f} ms "
        f"({r[f'sharded_{shards}_s'] / r['unsharded_s']:.2f}x unsharded); index {r['index_bytes'] / MB:.0f} MB\n"
        f"  memory of the one-index process (1 shard actor): {each(r['memory_1'])}\n"
        f"  memory of each of the {shards} shard actors: {each(r[f'memory_{shards}'])}\n"
        f"  load average {r['load_average']}"
    )


# --quick: a Ray head without the autoscaler's monitor and the log monitor, two Python processes a run of seconds
# has no use for (a third of a bare Ray start's CPU seconds); the full mode's cluster is as it was measured with
QUICK_HEAD = {"no_monitor": True, "include_log_monitor": False}


@contextmanager
def local_cluster(nodes: int, cpus: int = 1, quick: bool = False) -> Iterator[None]:
    """A local Ray cluster of `nodes` nodes of `cpus` CPUs (ray.cluster_utils), joined by this process while it
    lasts; `quick`: its head `QUICK_HEAD`."""
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": cpus, **(QUICK_HEAD if quick else {})})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=cpus)
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()
        cluster.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=200_000)
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--kinds", default="bm25,lucene_bm25,flashrag_bm25,dense,faiss_index")
    parser.add_argument("--dim", type=int, default=384, help="dimensions of the dense and faiss vectors")
    parser.add_argument("--work-dir", type=Path, help="keep the corpus and the indexes here, reused by a later run")
    parser.add_argument("--json-out", type=Path, help="write the figures here (benchmarks/scale_projection.py)")
    parser.add_argument(
        "--quick", action="store_true", help="5000 passages, 2 shards on one node of 2 CPUs, bm25 and dense"
    )
    args = parser.parse_args()
    passages, shards = (5000, 2) if args.quick else (args.passages, args.shards)
    kinds = ("bm25", "dense") if args.quick else tuple(args.kinds.split(","))
    cases = {kind: partial(sparse_case, kind) for kind in ("bm25", "lucene_bm25", "flashrag_bm25")}
    cases |= {"dense": dense_case, "faiss_index": faiss_case}
    unknown = sorted(set(kinds) - set(cases))
    if unknown:
        raise SystemExit(f"sharded_search: --kinds {','.join(unknown)}: choose from {', '.join(cases)}")

    figures = {"machine": machine(), "passages": passages, "shards": shards, "queries": QUERIES, "k": K}
    figures |= {"dim": args.dim, "kinds": {}}
    if args.json_out and args.json_out.is_file():  # the kinds of an earlier run of the same sizes are kept
        earlier = json.loads(args.json_out.read_text())
        if all(earlier.get(key) == figures[key] for key in ("passages", "shards", "dim")):
            figures["kinds"] = earlier["kinds"]
    with local_cluster(*((1, shards, True) if args.quick else (shards, 1))), tempfile.TemporaryDirectory() as tmp:
        work = args.work_dir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for name in kinds:
            r = cases[name](work, passages, shards, args.dim)
            r["load_average"] = [round(x, 1) for x in os.getloadavg()]
            figures["kinds"][name] = r
            print(report(name, r, passages, shards), flush=True)
            if args.json_out:
                args.json_out.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
