"""Retrieval: index build speed and memory, query throughput, on a synthetic psgs_w100-like corpus.

The corpus: `--passages` (default 100,000) passages of 100 words (psgs_w100's passage length)
drawn Zipf-distributed from the ~20,000 whole English words of MiniLM's WordPiece vocabulary (one
token each, so encoder cost is realistic), with 1-3 word titles, written as a DPR TSV. Every
build runs in its own process so that its peak RSS (VmHWM) is its own (`--quick`: in this process, a check
that the script runs):

  bm25 streaming     `ragbench index build --retriever bm25` path (chunks of --chunk-size)
  bm25s in memory    bm25s as its README uses it: tokenize the whole corpus, BM25.index, save
  dense streaming    the embedded all-MiniLM-L6-v2 on `--dense-passages` passages (CPU-bound)

then queries per second (batches of --query-batch, k=100) for bm25 and dense (numpy and faiss
backends) over the built indexes, memory-mapped as runs load them; for dense also the top-k scan
alone (the part that grows with the corpus; query encoding does not).

Run: python benchmarks/retrieval_build.py [--passages 100000] [--dense-passages 10000]   (~6 min)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def english_words() -> np.ndarray:
    from ragbench._retrieval.dense.retriever import model_location

    vocab = (Path(model_location("embedded")) / "vocab.txt").read_text(encoding="utf-8").split("\n")
    return np.array([w for w in vocab if w.isalpha() and w.isascii() and len(w) > 1])


def write_corpus(path: Path, passages: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    vocab = english_words()
    ranks = np.minimum(rng.zipf(1.2, size=(passages, 100)), len(vocab)) - 1
    titles = rng.integers(0, len(vocab), size=(passages, 3))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("id\ttext\ttitle\n")
        for i in range(passages):
            title = " ".join(vocab[titles[i, : 1 + i % 3]])
            handle.write(f'{i + 1}\t"{" ".join(vocab[ranks[i]])}"\t{title}\n')


def queries(n: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = english_words()
    return [" ".join(vocab[rng.integers(0, len(vocab), size=8)]) for _ in range(n)]


# --- children: one measurement each, printing JSON ----------------------------------------------


def child_streaming(corpus: str, out: str, kind: str, chunk_size: int, extra: str) -> dict:
    from ragbench._registry import installed_registry
    from ragbench._retrieval.index.building import build_index

    options = json.loads(extra)
    started = time.perf_counter()
    manifest = build_index(
        corpus, out, kind, options, chunk_size=chunk_size, progress=False, registry=installed_registry()
    )
    return {"seconds": time.perf_counter() - started, "passages": manifest.doc_count}


def child_bm25s_in_memory(corpus: str, out: str) -> dict:
    import bm25s
    import Stemmer

    from ragbench._retrieval.corpus.readers import passage_text, read_corpus

    started = time.perf_counter()
    texts = [passage_text(doc) for doc in read_corpus(corpus)]
    retriever = bm25s.BM25(k1=0.9, b=0.4)
    retriever.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("porter"), show_progress=False),
        show_progress=False,
    )
    retriever.save(out)
    return {"seconds": time.perf_counter() - started, "passages": len(texts)}


def child_queries(index: str, kind: str, batch: int, rounds: int, backend: str) -> dict:
    """Median seconds per batch of `search` (and, for dense, of the top-k scan alone, queries
    already encoded): the median keeps other processes' bursts on a shared machine out."""
    from ragbench._registry import installed_registry
    from ragbench._retrieval import load_retriever
    from ragbench._retrieval.dense.exact_search import inner_product_top_k

    args = {"index": index, **({"backend": backend} if kind == "dense" else {})}
    retriever = load_retriever(kind, args, registry=installed_registry())
    batches = [queries(batch, seed) for seed in range(rounds + 1)]
    retriever.search(batches[0], 100)  # warm-up: page in the memory maps, load the encoder
    search, scan = [], []
    for chunk in batches[1:]:
        started = time.perf_counter()
        retriever.search(chunk, 100)
        search.append(time.perf_counter() - started)
        if kind == "dense":
            encoded = retriever.encoder.encode_queries(chunk)
            started = time.perf_counter()
            inner_product_top_k(encoded, retriever.embeddings, 100, retriever.chunk_rows, backend)
            scan.append(time.perf_counter() - started)
    return {
        "search_qps": batch / float(np.median(search)),
        "scan_qps": batch / float(np.median(scan)) if scan else None,
    }


def child_build_then_queries(corpus: str, out: str, kind: str, chunk_size: int, batch: int, rounds: int) -> dict:
    """--quick's side of `kind` (bm25, dense) in one process: the streaming build, then `child_queries` (dense:
    numpy) over what it built, so that its libraries are imported once (sentence-transformers: ~15 s of CPU a
    process); the build's peak is taken before the queries, the search's is the process's (the build's
    included)."""
    dense = kind == "dense"
    build = child_streaming(corpus, out, kind, chunk_size, json.dumps({"model": "embedded"} if dense else {}))
    build["peak_rss_mb"] = peak_rss_mb()
    search = child_queries(out, kind, batch, rounds, "numpy" if dense else "-")
    search["peak_rss_mb"] = peak_rss_mb()
    return {"build": build, "search": search}


def peak_rss_mb() -> float:
    """This process's own peak resident memory (VmHWM; ru_maxrss would carry the parent's peak over
    the fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def child(name: str, *rest: str) -> dict:
    """The measurement `name` (a `--child` line's) on `rest`, with this process's peak RSS."""
    if name == "streaming":
        result = child_streaming(rest[0], rest[1], rest[2], int(rest[3]), rest[4])
    elif name == "bm25s":
        result = child_bm25s_in_memory(*rest)
    elif name == "build-then-queries":
        result = child_build_then_queries(rest[0], rest[1], rest[2], int(rest[3]), int(rest[4]), int(rest[5]))
    else:
        result = child_queries(rest[0], rest[1], int(rest[2]), int(rest[3]), rest[4])
    result["peak_rss_mb"] = peak_rss_mb()
    return result


def run_child(*args: str, here: bool = False) -> dict:
    """`child(*args)` in a fresh process, or (`here`: the quick mode, whose peaks are not a figure) in this one."""
    if here:
        return child(*args)
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--dense-passages", type=int, default=10_000, help="MiniLM encodes ~50 passages/s on 2 cores")
    parser.add_argument("--chunk-size", type=int, default=10_000)
    parser.add_argument("--query-batch", type=int, default=64)
    parser.add_argument("--query-rounds", type=int, default=5)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a small run for CI (200 passages in chunks of 100, 8 dense, batches of 4 queries, once; dense search "
        "with the numpy backend alone: faiss's is the same child on another backend; each of the bm25 and the "
        "dense build and its search in one measurement, its peak RSS the search's; the measurements in this process, "
        "their peaks this process's: the script runs end to end; no builds of the corpus twice as large: the same "
        "children on a larger file)",
    )
    args = parser.parse_args()
    if args.quick:
        args.passages, args.dense_passages, args.chunk_size = 200, 8, 100
        args.query_batch, args.query_rounds = 4, 1
    if args.child:
        print(json.dumps(child(*args.child)))
        return

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        corpus, double, dense_corpus = tmp / "psgs.tsv", tmp / "psgs_x2.tsv", tmp / "psgs_dense.tsv"
        write_corpus(corpus, args.passages)
        if not args.quick:
            write_corpus(double, 2 * args.passages)
        write_corpus(dense_corpus, args.dense_passages)
        mb = corpus.stat().st_size / 2**20
        print(
            f"corpus: {args.passages} passages x 100 words, {mb:.0f} MB TSV"
            f"{'' if args.quick else ' (and one twice as large)'}; dense: {args.dense_passages} passages"
        )
        sizes = (str(args.chunk_size), str(args.query_batch), str(args.query_rounds))
        quick_bm25 = args.quick and run_child(
            "build-then-queries", str(corpus), str(tmp / "bm25"), "bm25", *sizes, here=True
        )
        builds = {
            "bm25 streaming": quick_bm25["build"]
            if quick_bm25
            else run_child("streaming", str(corpus), str(tmp / "bm25"), "bm25", str(args.chunk_size), "{}"),
            "bm25s in memory": run_child("bm25s", str(corpus), str(tmp / "bm25s"), here=args.quick),
        }
        quick_dense = args.quick and run_child(
            "build-then-queries", str(dense_corpus), str(tmp / "dense"), "dense", *sizes, here=True
        )
        builds["dense streaming (MiniLM)"] = (
            quick_dense["build"]
            if quick_dense
            else run_child(
                "streaming",
                str(dense_corpus),
                str(tmp / "dense"),
                "dense",
                str(args.chunk_size),
                json.dumps({"model": "embedded"}),
            )
        )
        if not args.quick:  # the growth with the corpus: the same children on a corpus twice as large
            builds["bm25 streaming, 2x corpus"] = run_child(
                "streaming", str(double), str(tmp / "bm25_x2"), "bm25", str(args.chunk_size), "{}"
            )
            builds["bm25s in memory, 2x corpus"] = run_child("bm25s", str(double), str(tmp / "bm25s_x2"))
        print(f"\n| build (chunk {args.chunk_size}) | passages | seconds | passages/s | peak RSS MB |")
        print("|---|---:|---:|---:|---:|")
        for name, r in builds.items():
            print(
                f"| {name} | {r['passages']} | {r['seconds']:.1f} | {r['passages'] / r['seconds']:.0f} | "
                f"{r['peak_rss_mb']:.0f} |"
            )
        for suffix in ("", ", 2x corpus") if not args.quick else ("",):
            stream, whole = builds["bm25 streaming" + suffix], builds["bm25s in memory" + suffix]
            print(
                f"bm25 streaming vs bm25s in memory{suffix}: {whole['seconds'] / stream['seconds']:.2f}x the speed, "
                f"{stream['peak_rss_mb'] / whole['peak_rss_mb']:.2f}x the peak memory"
            )
        if not args.quick:
            growth = {
                name: builds[name + ", 2x corpus"]["peak_rss_mb"] - builds[name]["peak_rss_mb"]
                for name in ("bm25 streaming", "bm25s in memory")
            }
            print(
                f"peak memory added by doubling the corpus: streaming +{growth['bm25 streaming']:.0f} MB, "
                f"in memory +{growth['bm25s in memory']:.0f} MB"
            )

        searches = {
            "bm25": quick_bm25["search"]
            if quick_bm25
            else run_child("queries", str(tmp / "bm25"), "bm25", str(args.query_batch), str(args.query_rounds), "-"),
            **(
                {"dense numpy": quick_dense["search"]}
                if quick_dense
                else {
                    f"dense {backend}": run_child(
                        "queries", str(tmp / "dense"), "dense", str(args.query_batch), str(args.query_rounds), backend
                    )
                    for backend in ("numpy", "faiss")
                }
            ),
        }
        print(
            f"\n| search, k=100, batches of {args.query_batch} | index passages | queries/s | top-k scan alone, "
            "queries/s | peak RSS MB |"
        )
        print("|---|---:|---:|---:|---:|")
        for name, r in searches.items():
            size = args.passages if name == "bm25" else args.dense_passages
            scan = f"{r['scan_qps']:.0f}" if r["scan_qps"] else "-"
            print(f"| {name} | {size} | {r['search_qps']:.0f} | {scan} | {r['peak_rss_mb']:.0f} |")


if __name__ == "__main__":
    main()
