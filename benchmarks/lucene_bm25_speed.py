"""lucene_bm25 against pyserini and bm25s: index build and query speed, and how often the top 10 agree with pyserini's.

The corpus: `--passages` (default 5,000) passages of 100 words drawn Zipf-distributed from the ~20,000 whole English
words of MiniLM's WordPiece vocabulary (as retrieval_build.py), with a few numbers, possessives and URLs; queries of
2-6 words from the same distribution. Timed:

  lucene_bm25   `ragbench index build --retriever lucene_bm25`, then searches of --query-batch queries, k=10
  bm25          `ragbench index build --retriever bm25` (bm25s), the same searches
  pyserini      with `--pyserini-python` (an interpreter with pyserini and pyjnius; JAVA_HOME a Java 21+):
                `pyserini.index.lucene`'s IndexCollection (JsonCollection, one thread) and LuceneSearcher's
                SimpleSearcher.search one query at a time, as pyserini's users call it; JVM start-up excluded

Run: python benchmarks/lucene_bm25_speed.py [--passages 5000] [--queries 1000] [--pyserini-python /tmp/lucene-venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

PYSERINI = r"""
import glob, json, os, sys, time
import jnius_config
jar = glob.glob(os.path.dirname(__import__("pyserini").__file__) + "/resources/jars/anserini-*-fatjar.jar")[0]
jnius_config.set_classpath(jar)
from jnius import autoclass
folder, k = sys.argv[1], int(sys.argv[2])
java_string = autoclass("java.lang.String")
started = time.perf_counter()
args = f"-collection JsonCollection -input {folder}/in -index {folder}/pyserini -generator DefaultLuceneDocumentGenerator"
autoclass("io.anserini.index.IndexCollection").main((args + " -threads 1 -storePositions -storeDocvectors -storeRaw -quiet").split())
built = time.perf_counter() - started
searcher = autoclass("io.anserini.search.SimpleSearcher")(f"{folder}/pyserini")
searcher.set_bm25(0.9, 0.4)
queries = json.load(open(f"{folder}/queries.json", encoding="utf-8"))
started = time.perf_counter()
hits = [[[h.docid, h.score] for h in searcher.search(java_string(q.encode("utf-8"), "UTF-8"), k)] for q in queries]
searched = time.perf_counter() - started
json.dump({"build": built, "search": searched, "hits": hits}, open(f"{folder}/pyserini.json", "w"))
"""


def words(quick: bool) -> np.ndarray:
    if quick:  # no model files needed
        return np.array([f"{a}{b}" for a in ("run", "fox", "bank", "river", "city") for b in ("", "s", "ing", "er")])
    sys.path.insert(0, str(Path(__file__).parent))
    from retrieval_build import english_words

    return english_words()


def write_corpus(folder: Path, passages: int, queries: int, quick: bool) -> list[str]:
    rng = np.random.default_rng(0)
    vocab = words(quick)
    extra = np.array(["3.14", "1,000", "O'Neil's", "http://example.com/a?b=1", "me@mail.org", "U.S.A."])
    ranks = np.minimum(rng.zipf(1.2, size=(passages, 100)), len(vocab)) - 1
    (folder / "in").mkdir()
    with (
        open(folder / "corpus.jsonl", "w", encoding="utf-8") as ours,
        open(folder / "in" / "docs.jsonl", "w") as theirs,
    ):
        for n, row in enumerate(ranks):
            text = " ".join(vocab[row]) + " " + " ".join(rng.choice(extra, 3))
            ours.write(json.dumps({"id": f"p{n}", "text": text}) + "\n")
            theirs.write(json.dumps({"id": f"p{n}", "contents": text}) + "\n")
    asked = [" ".join(vocab[np.minimum(rng.zipf(1.3, rng.integers(2, 7)), len(vocab)) - 1]) for _ in range(queries)]
    (folder / "queries.json").write_text(json.dumps(asked), encoding="utf-8")
    return asked


def ragbench_run(folder: Path, kind: str, asked: list[str], k: int, batch: int) -> dict:
    from ragbench._registry import installed_registry
    from ragbench._retrieval.index.building import build_index

    started = time.perf_counter()
    build_index(
        folder / "corpus.jsonl", folder / kind, kind, title=False, progress=False, registry=installed_registry()
    )
    built = time.perf_counter() - started
    retriever = installed_registry().load("retrievers", kind)(index=str(folder / kind))
    started = time.perf_counter()
    hits = []
    for i in range(0, len(asked), batch):
        hits += [[[doc.id, doc.score] for doc in row] for row in retriever.search(asked[i : i + batch], k)]
    searched = time.perf_counter() - started
    retriever.close()
    return {"build": built, "search": searched, "hits": hits}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--query-batch", type=int, default=64)
    parser.add_argument("--pyserini-python", help="an interpreter with pyserini and pyjnius (JAVA_HOME: Java 21+)")
    parser.add_argument("--quick", action="store_true", help="300 passages, 50 queries (a smoke test)")
    args = parser.parse_args()
    passages, queries = (300, 50) if args.quick else (args.passages, args.queries)
    k = 10
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        asked = write_corpus(folder, passages, queries, args.quick)
        results = {kind: ragbench_run(folder, kind, asked, k, args.query_batch) for kind in ("lucene_bm25", "bm25")}
        if args.pyserini_python:
            subprocess.run(
                [args.pyserini_python, "-c", PYSERINI, str(folder), str(k)], check=True, env=dict(os.environ)
            )
            results["pyserini"] = json.loads((folder / "pyserini.json").read_text())
    print(f"{passages} passages of 100 words, {queries} queries of 2-6 words, k={k}")
    print(f"{'':12} {'build s':>8} {'passages/s':>11} {'search s':>9} {'queries/s':>10}")
    for kind, found in results.items():
        print(
            f"{kind:12} {found['build']:8.2f} {passages / found['build']:11,.0f} {found['search']:9.2f} "
            f"{queries / found['search']:10,.0f}"
        )
    if "pyserini" in results:
        expected = results["pyserini"]["hits"]
        for kind in ("lucene_bm25", "bm25"):
            same = sum(got == want for got, want in zip(results[kind]["hits"], expected))
            ids = sum([h[0] for h in got] == [h[0] for h in want] for got, want in zip(results[kind]["hits"], expected))
            print(f"{kind}: top {k} as pyserini's, ids and scores: {same}/{queries}; ids in order: {ids}/{queries}")


if __name__ == "__main__":
    main()
