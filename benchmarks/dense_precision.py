"""What half precision does to dense retrieval: the same corpus indexed with `--build-arg encoder_dtype=float16` and
`bfloat16` against the float32 index (issue 79, item 4): recall@k of float32's top k, how many queries' top k hold
other ids or the same ids in another order, where float32's top hit lands, the vectors' cosine to float32's, and
the encoder's passages/s in each dtype (warm, on the first `--rate-passages` passages), with the machine's load.

The corpus is real English that every machine with this Python has, read without importing anything: the
docstrings of the standard library's modules, classes and functions (`ast` over its .py files, in path order), at
least 20 words each, cut to 64 words. Every other docstring is a passage; the first line of the others (a
function's summary, "Return the number of items ...") are the queries: related to the passages, never one of them.

Each index is built as `ragbench index build --retriever dense --model embedded` builds it (the packaged
all-MiniLM-L6-v2; `--model DIR` for another) and searched as a run searches it, queries encoded in its own dtype.

Run: python benchmarks/dense_precision.py [--passages 1000] [--queries 200] [--k 10] [--model embedded]
     [--device cpu] [--batch-size 64]
     python benchmarks/dense_precision.py --quick     (6 passages of 16 words, 2 queries: tests)
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np

DTYPES = ("float32", "float16", "bfloat16")
MIN_WORDS, MAX_WORDS = 20, 64
QUICK_PASSAGES, QUICK_WORDS = 6, 16


def docstrings(limit: int) -> list[str]:
    """The standard library's docstrings of at least MIN_WORDS words, whitespace collapsed, in path order."""
    found: list[str] = []
    files = []
    for folder, subfolders, names in os.walk(sysconfig.get_paths()["stdlib"]):
        subfolders[:] = [name for name in subfolders if name not in ("site-packages", "test", "tests")]
        files += [Path(folder, name) for name in names if name.endswith(".py")]
    for path in sorted(files):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                text = ast.get_docstring(node) or ""
                if len(text.split()) >= MIN_WORDS:
                    found.append(text)
        if len(found) >= limit:
            break
    return found[:limit]


def corpus_and_queries(passages: int, queries: int, words: int = MAX_WORDS) -> tuple[list[str], list[str]]:
    texts = docstrings(2 * max(passages, queries))
    corpus = [" ".join(text.split()[:words]) for text in texts[0::2][:passages]]
    asked = [text.strip().splitlines()[0].strip() for text in texts[1::2]]
    return corpus, [query for query in asked if len(query.split()) >= 3][:queries]


def write_jsonl(path: Path, texts: list[str]) -> None:
    import json

    with path.open("w", encoding="utf-8") as handle:
        for number, text in enumerate(texts):
            handle.write(json.dumps({"id": str(number), "title": "", "text": text}) + "\n")


def build_and_search(
    corpus: Path, out: Path, dtype: str, args: argparse.Namespace, queries: list[str], sample: list[str]
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """(the encoder's passages/s on `sample`, top-k ids, their scores, the index's vectors) of an index built with
    `dtype`, searched with its own encoder."""
    from ragbench.testing import build_index, installed_registry, load_retriever

    registry = installed_registry()
    options = {"model": args.model, "batch_size": args.batch_size, "device": args.device, "encoder_dtype": dtype}
    build_index(corpus, out, "dense", options, title=False, chunk_size=1000, progress=False, registry=registry)
    retriever = load_retriever("dense", {"index": str(out), "device": args.device}, registry=registry)
    try:
        encoder = retriever.encoder  # type: ignore[attr-defined]
        encoder.encode_passages(sample[:8])  # warm-up
        start = time.perf_counter()
        encoder.encode_passages(sample)
        rate = len(sample) / (time.perf_counter() - start)
        hits = retriever.search(queries, args.k)
        ids = np.array([[int(doc.id) for doc in row] for row in hits])
        scores = np.array([[doc.score for doc in row] for row in hits])
        vectors = np.asarray(retriever.embeddings, dtype=np.float32)  # type: ignore[attr-defined]
    finally:
        retriever.close()
    return rate, ids, scores, vectors


def compare(reference: np.ndarray, other: np.ndarray, k: int) -> dict[str, float]:
    """recall@k of `reference`'s top k, queries whose top k hold other ids or the same ids in another order, top
    hits equal, and the mean rank `other` gives `reference`'s top hit (k+1 where it is not in the top k)."""
    recall = np.mean([len(set(a) & set(b)) / len(a) for a, b in zip(reference, other)])
    other_ids = np.mean([set(a) != set(b) for a, b in zip(reference, other)])
    same_set = [set(a) == set(b) for a, b in zip(reference, other)]
    reordered = np.mean([same and list(a) != list(b) for same, a, b in zip(same_set, reference, other)])
    ranks = [list(b).index(a[0]) + 1 if a[0] in b else k + 1 for a, b in zip(reference, other)]
    return {
        "recall": float(recall),
        "other_ids": float(other_ids),
        "reordered": float(reordered),
        "top1": float(np.mean(reference[:, 0] == other[:, 0])),
        "top1_rank": float(np.mean(ranks)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--model", default="embedded", help="a sentence-transformers folder, or 'embedded'")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--rate-passages", type=int, default=128, help="passages the encoding rate is timed on")
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_PASSAGES} passages of {QUICK_WORDS} words, 2 queries (tests)"
    )
    args = parser.parse_args()
    words = MAX_WORDS
    if args.quick:  # every dtype's build and search as with more; on a CPU half precision encodes slowly
        args.passages, args.queries, args.k, args.rate_passages, words = QUICK_PASSAGES, 2, 2, 2, QUICK_WORDS

    import torch

    corpus, queries = corpus_and_queries(args.passages, args.queries, words)
    load = os.getloadavg()
    print(
        f"{len(corpus)} passages (stdlib docstrings, <= {words} words), {len(queries)} queries, k={args.k}; "
        f"model {args.model} on {args.device}; torch {torch.__version__}, {torch.get_num_threads()} threads; "
        f"{os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
    )
    results = {}
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        write_jsonl(scratch / "corpus.jsonl", corpus)
        for dtype in DTYPES:
            results[dtype] = build_and_search(
                scratch / "corpus.jsonl", scratch / dtype, dtype, args, queries, corpus[: args.rate_passages]
            )
    _, ref_ids, ref_scores, ref_vectors = results["float32"]
    print(
        f"\n{'encoder_dtype':<14}{'encode p/s':>11}{f'recall@{args.k}':>11}{'other ids':>10}{'reordered':>10}"
        f"{'top1 same':>10}{'rank of f32 top1':>17}{'min cos':>9}{'max |dscore|':>13}"
    )
    for dtype, (rate, ids, scores, vectors) in results.items():
        figures = compare(ref_ids, ids, args.k)
        cosines = np.sum(ref_vectors * vectors, axis=1) / (
            np.linalg.norm(ref_vectors, axis=1) * np.linalg.norm(vectors, axis=1)
        )
        delta = np.abs(ref_scores[:, 0] - scores[:, 0]).max()
        print(
            f"{dtype:<14}{rate:>11.0f}{figures['recall']:>11.4f}{figures['other_ids']:>10.1%}"
            f"{figures['reordered']:>10.1%}{figures['top1']:>10.1%}{figures['top1_rank']:>17.3f}"
            f"{cosines.min():>9.5f}{delta:>13.2e}"
        )
    load = os.getloadavg()
    print(f"(load average at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
