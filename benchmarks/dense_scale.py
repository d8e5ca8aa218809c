"""Dense retrieval at scale: memory and search speed of faiss indexes as FlashRAG builds them, measured at the
largest size the machine holds and extrapolated to a 21M-passage corpus (wiki-dpr psgs_w100, FlashRAG's
wiki18_100w: 21,015,324 passages) with the formulas printed beside the figures.

Vectors are random 768-d float32, L2-normalised (e5-base-v2's width and normalisation), added in blocks as
FlashRAG's `Index_Builder.save_faiss_index` adds its embeddings (`faiss.index_factory(768, TYPE,
METRIC_INNER_PRODUCT)`, train when needed, add). For each index type: resident memory the index adds, build
time, and search time per batch of queries at k=5 (FlashRAG's retrieval_topk) on the faiss threads the machine
has. Random vectors are the worst case for IVF and HNSW recall (no clusters), not for their speed or memory.
Then the corpus side of `--retriever faiss_index`: the scan that finds where each JSONL row starts (once per
run) and its 8 bytes a row. Query encoding is left out: it costs the same whatever the corpus size.

Run: python benchmarks/dense_scale.py [--vectors 1000000] [--types Flat,IVF1024,Flat,SQ8,HNSW32]
     [--hnsw-vectors 100000]     (~10 min at 1M on 2 cores)
     python benchmarks/dense_scale.py --quick                          (seconds)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

WIKI_PASSAGES = 21_015_324  # psgs_w100.tsv / wiki18_100w.jsonl
DIM = 768
TOPK = 5
BLOCK = 100_000
BATCHES = (1, 16, 64, 256)
GB = 1e9


def rss_bytes(kind: str = "RssAnon") -> int:
    """This process's resident memory now (Linux /proc/self/status): `RssAnon` is what it holds itself, `RssFile`
    the pages of mapped files it has touched (page cache, given back under memory pressure)."""
    with open("/proc/self/status") as handle:
        line = next(line for line in handle if line.startswith(kind + ":"))
    return int(line.split()[1]) * 1024


def written_bytes(index: object, path: Path) -> int:
    """The index's size as faiss writes it to `path` (its vectors or codes, ids, lists and links: what it holds in
    memory); written to disk, not to a second copy in memory."""
    import faiss

    faiss.write_index(index, str(path))
    return path.stat().st_size


def random_vectors(count: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, DIM), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def build(kind: str, count: int, train_size: int) -> tuple[object, float, int]:
    """An index of `count` vectors, added block by block; (index, seconds, bytes of resident memory it added)."""
    import faiss

    before = rss_bytes()
    started = time.perf_counter()
    index = faiss.index_factory(DIM, kind, faiss.METRIC_INNER_PRODUCT)
    if not index.is_trained:
        index.train(random_vectors(min(train_size, count), seed=99))
    for start in range(0, count, BLOCK):
        index.add(random_vectors(min(BLOCK, count - start), seed=start))
    return index, time.perf_counter() - started, rss_bytes() - before


def search_times(index: object, repeats: int) -> dict[int, float]:
    """Seconds per search of a batch of B queries (the best of `repeats`), for each B in BATCHES."""
    times = {}
    for batch in BATCHES:
        queries = random_vectors(batch, seed=7)
        index.search(queries, TOPK)  # warm
        best = float("inf")
        for _ in range(repeats):
            started = time.perf_counter()
            index.search(queries, TOPK)
            best = min(best, time.perf_counter() - started)
        times[batch] = best
    return times


def set_probes(index: object, kind: str) -> str:
    """The search setting the figures are for: nprobe 16 for IVF, efSearch 64 for HNSW (faiss's defaults: 1, 16)."""
    import faiss

    if kind.startswith("IVF"):
        faiss.ParameterSpace().set_index_parameter(index, "nprobe", 16)
        return "nprobe=16"
    if kind.startswith("HNSW"):
        faiss.ParameterSpace().set_index_parameter(index, "efSearch", 64)
        return "efSearch=64"
    return ""


def measure_mmap(path: Path, repeats: int) -> dict:
    """The flat index at `path` read with IO_FLAG_MMAP_IFC (`--retriever-arg mmap=true`): the vectors stay in the
    page cache, not in the process."""
    import faiss

    before, before_file = rss_bytes(), rss_bytes("RssFile")
    mapped = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC)
    times = search_times(mapped, repeats)
    return {"rss": rss_bytes() - before, "rss_file": rss_bytes("RssFile") - before_file, "search_s": times}


def measure_rows(folder: Path, rows: int) -> dict:
    """`jsonl_rows.row_starts` over a FlashRAG-like corpus of `rows` 100-word passages."""
    from ragbench._retrieval.corpus.jsonl_rows import JsonlRows  # imported before the clock starts

    path = folder / "wiki.jsonl"
    words = " ".join(["passage"] * 100)
    with open(path, "w", encoding="utf-8") as handle:
        for row in range(rows):
            handle.write(json.dumps({"id": str(row), "contents": f'"Title {row}"\n{words} {row}'}) + "\n")
    size = path.stat().st_size
    before = rss_bytes()
    started = time.perf_counter()
    corpus = JsonlRows(path)
    seconds = time.perf_counter() - started
    found = len(corpus)
    corpus.close()
    return {"rows": found, "bytes": size, "seconds": seconds, "rss": rss_bytes() - before}


def report(results: dict) -> None:
    """The figures, and each index at 21M passages: its bytes a vector x 21M; a scan's search time (Flat, SQ8, an
    IVF whose list count stays) x 21M / n; HNSW's grows about with log n, so its measured time is shown alone."""
    print(
        f"faiss {results['faiss']}, {results['threads']} threads, {DIM}-d float32, k={TOPK}; "
        f"extrapolated to {WIKI_PASSAGES:,} passages"
    )
    header = "".join(f"  B={b:<5}s" for b in BATCHES)
    print(f"{'index':<12}{'n':>10}{'build s':>9}{'RSS GB':>8}{'B/vec':>7}{header}  at 21M: GB, s/batch of 64")
    for row in results["indexes"]:
        per_vector = row["bytes"] / row["vectors"]
        times = "".join(f"{row['search_s'][b]:9.4f}" for b in BATCHES)
        at_scale = (
            "" if row["type"].startswith("HNSW") else f"{row['search_s'][64] * WIKI_PASSAGES / row['vectors']:8.2f}"
        )
        print(
            f"{row['type']:<12}{row['vectors']:>10,}{row['build_s']:9.1f}{row['rss'] / GB:8.2f}{per_vector:7.0f}"
            f"{times}  {per_vector * WIKI_PASSAGES / GB:6.1f}{at_scale}  {row['setting']}"
        )
    if "mmap" in results:
        mapped = results["mmap"]
        times = "".join(f"{mapped['search_s'][b]:9.4f}" for b in BATCHES)
        print(
            f"{'Flat mmap':<12}{results['vectors']:>10,}{'':>9}{mapped['rss'] / GB:8.2f}{'':>7}{times}"
            f"  (page cache touched: {mapped['rss_file'] / GB:.2f} GB)"
        )
    rows = results["rows"]
    print(
        f"corpus rows: {rows['rows']:,} rows, {rows['bytes'] / GB:.3f} GB scanned in {rows['seconds']:.2f} s "
        f"({rows['bytes'] / rows['seconds'] / GB:.2f} GB/s), {rows['rss'] / rows['rows']:.1f} B/row held"
    )
    print(
        f"Flat at 21M: {WIKI_PASSAGES:,} x {DIM} x 4 B = {WIKI_PASSAGES * DIM * 4 / GB:.1f} GB; "
        f"row offsets: {WIKI_PASSAGES:,} x 8 B = {WIKI_PASSAGES * 8 / GB:.2f} GB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vectors", type=int, default=1_000_000)
    parser.add_argument(
        "--types",
        default="Flat,IVF1024,Flat,SQ8,HNSW32",
        help="faiss index_factory strings, comma-separated (an IVF's ',Flat' stays with it)",
    )
    parser.add_argument("--hnsw-vectors", type=int, default=100_000, help="HNSW builds slowly: its own, smaller n")
    parser.add_argument("--rows", type=int, default=1_000_000, help="corpus rows for the row scan")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--quick", action="store_true", help="2,560 vectors, seconds")
    args = parser.parse_args()
    if args.quick:  # IVF64 trains on all 2,560, over the 39 vectors a list (2,496) faiss asks for
        args.vectors, args.hnsw_vectors, args.rows, args.repeats = 2_560, 500, 2_000, 1
        args.types = "Flat,IVF64,Flat,SQ8,HNSW32"
    import faiss

    kinds = [part.replace("|", ",") for part in args.types.replace(",Flat", "|Flat").split(",")]
    results: dict = {
        "faiss": faiss.__version__,
        "threads": faiss.omp_get_max_threads(),
        "vectors": args.vectors,
        "indexes": [],
    }
    with tempfile.TemporaryDirectory() as scratch:
        for kind in kinds:
            count = args.hnsw_vectors if kind.startswith("HNSW") else args.vectors
            index, seconds, added = build(kind, count, train_size=max(50 * 1024, count // 10))
            setting = set_probes(index, kind)
            path = Path(scratch) / "index"
            row = {
                "type": kind,
                "vectors": count,
                "build_s": seconds,
                "rss": added,
                "bytes": written_bytes(index, path),
                "setting": setting,
                "search_s": search_times(index, args.repeats),
            }
            results["indexes"].append(row)
            del index
            if kind == "Flat":
                results["mmap"] = measure_mmap(path, args.repeats)
            path.unlink()
        results["rows"] = measure_rows(Path(scratch), args.rows)
    report(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
