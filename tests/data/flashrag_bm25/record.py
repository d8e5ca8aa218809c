"""Records what FlashRAG's own BM25 (bm25s backend) does with the corpus and queries written here.

Run with a Python that has FlashRAG's code unchanged (recorded at commit 1ee5249) and the bm25s its
requirements.txt pins (`bm25s[core]==0.2.1`, with numba):

    python tests/data/flashrag_bm25/record.py

Writes here: corpus.jsonl; bm25/, the index FlashRAG's `Index_Builder(retrieval_method="bm25")` builds from it
(the files tests search); and expected.json, what FlashRAG's `BM25Retriever` answers: `batch_search` over the
queries that it can answer, and for each query alone `search`'s ids and scores, or the error it raises.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOPICS = [
    "river",
    "mountain",
    "castle",
    "harbor",
    "forest",
    "desert",
    "glacier",
    "volcano",
    "island",
    "canyon",
    "meadow",
    "valley",
    "lagoon",
    "tundra",
    "prairie",
    "marsh",
]
ACTIONS = ["running", "runs", "runner", "flows", "flowing", "sings", "singing", "builds", "building", "painted"]
THINGS = ["bridge", "tower", "garden", "library", "market", "temple", "lighthouse", "orchard"]
# FlashRAG's pipelines search with questions; these probe what tokenisation, ties and the top k do
QUERIES = [
    "where is the river near the castle",
    "river river",
    "running river",
    "run",
    "the runner sings",
    "glacier and volcano",
    "lighthouse",
    "a tower in the forest",
    "Lagoon!",
    "zebra quartz",
    "zebra",
    "what is the meaning of the orchard market",
    "",
    "the",
    "the of and is",
    "zzzzqqq",
    "x",
    "painted temple",
    "Which castle is the oldest?",
    "harbor harbor harbor market",
]
TOPK = 10
ALL_K = 300  # the corpus's size: every passage, in FlashRAG's order
LARGE_K = 400  # more than the corpus holds (FlashRAG's numba search raises)


def corpus_rows() -> list[dict]:
    """FlashRAG's corpus format (`contents`: a quoted title, a newline, the text): 300 passages from templates
    (many tie), exact duplicates under other ids, a stopword-only passage and one of a single rare word."""
    rows = []
    for i in range(280):
        topic, other = TOPICS[i % len(TOPICS)], TOPICS[(i * 7 + 3) % len(TOPICS)]
        action, thing = ACTIONS[(i // 3) % len(ACTIONS)], THINGS[(i * 5) % len(THINGS)]
        text = f"the {thing} by the {topic} {action} near the {other}" if i % 4 else f"{topic} {thing}"
        rows.append({"id": f"p{i}", "contents": f'"{topic.title()} {thing}"\n{text}'})
    for j in range(12):  # copies of earlier passages: equal scores for every query
        source = rows[j * 17]
        rows.append({"id": f"dup{j}", "contents": source["contents"]})
    rows.append({"id": "stop0", "contents": '"The"\nthe of and is it'})
    rows.append({"id": "rare0", "contents": '"Zebra"\nzebra'})
    rows.append({"id": "rare1", "contents": '"Quartz"\nquartz zebra quartz'})
    for k in range(5):
        rows.append({"id": f"tail{k}", "contents": f'"Tail {k}"\nthe lighthouse keeper {k} painted the temple'})
    return rows


def selection_cases() -> list[dict]:
    """bm25s's numba top k (what FlashRAG's search ends with) on score arrays full of ties, k up to above their
    length: the order a test replays without numba."""
    import numpy as np
    from bm25s.numba.selection import _numba_sorted_top_k

    rng = np.random.default_rng(52)
    cases = []
    for _ in range(60):
        n, k = int(rng.integers(1, 120)), int(rng.integers(1, 40))
        scores = (rng.integers(0, int(rng.integers(1, 5)), n) * (rng.random(n) < rng.random())).astype(np.float32)
        scores *= np.float32(0.37)
        values, positions = _numba_sorted_top_k(scores, k)
        cases.append({"scores": scores.tolist(), "k": k, "positions": positions.tolist(), "values": values.tolist()})
    return cases


def main() -> None:
    import bm25s
    import numba
    from flashrag.retriever.index_builder import Index_Builder
    from flashrag.retriever.retriever import BM25Retriever

    corpus = HERE / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(row) + "\n" for row in corpus_rows()), encoding="utf-8")
    with tempfile.TemporaryDirectory() as scratch:
        Index_Builder(
            retrieval_method="bm25",
            model_path=None,
            corpus_path=str(corpus),
            save_dir=scratch,
            max_length=None,
            batch_size=None,
            use_fp16=False,
            bm25_backend="bm25s",
        ).build_index()
        index = HERE / "bm25"
        shutil.rmtree(index, ignore_errors=True)
        shutil.copytree(Path(scratch) / "bm25", index)
        config = {
            "retrieval_method": "bm25",
            "retrieval_topk": TOPK,
            "index_path": str(index),
            "corpus_path": str(corpus),
            "save_retrieval_cache": False,
            "use_retrieval_cache": False,
            "retrieval_cache_path": None,
            "use_reranker": False,
            "silent_retrieval": True,
            "bm25_backend": "bm25s",
        }
        retriever = BM25Retriever(config)
        single = {}
        for k in (TOPK, ALL_K, LARGE_K):
            for query in QUERIES:
                try:
                    docs, scores = retriever.search(query, num=k, return_score=True)
                except (ValueError, SystemError) as exc:  # what FlashRAG raises for this query
                    single[f"{k}\t{query}"] = {"error": f"{type(exc).__name__}: {exc}"}
                    continue
                single[f"{k}\t{query}"] = {"ids": [doc["id"] for doc in docs], "scores": [float(s) for s in scores]}
        answerable = [query for query in QUERIES if "error" not in single[f"{TOPK}\t{query}"]]
        docs, scores = retriever.batch_search(answerable, num=TOPK, return_score=True)
        batch = {"queries": answerable, "ids": [[doc["id"] for doc in row] for row in docs], "scores": scores}
    expected = {
        "flashrag_commit": "1ee5249",
        "bm25s": bm25s.__version__,
        "numba": numba.__version__,
        "topk": TOPK,
        "all_k": ALL_K,
        "large_k": LARGE_K,
        "queries": QUERIES,
        "search": single,
        "batch_search": batch,
        "selection": selection_cases(),
    }
    (HERE / "expected.json").write_text(json.dumps(expected) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
