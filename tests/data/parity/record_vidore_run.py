"""Records tests/data/parity/vidore_run.json: a tiny random-weight ColPali's scores over tests/data/vidore/{v1,v2},
computed by vidore-benchmark's own ColPaliRetriever (colpali-engine 0.3.18), also with colpali-engine's
HierarchicalTokenPooler (pool_factor 2) applied to the pages; and colpali-engine's `score_multi_vector` over
made-up multi-vector embeddings of unequal lengths (`made_up`, which tests/retrieval/test_pages_maxsim.py makes
again), in float32 and bfloat16, at two batch sizes.

Step 1, in a venv with colpali-engine 0.3.18 and vidore-benchmark (--no-deps) importable:
    python record_vidore_run.py embed MODEL_FOLDER
Step 2 (record_vidore_metrics.py), in a venv with vidore-benchmark 5.0.0 and its own pins, adds the evaluator's figures.
"""

import json
import sys
from pathlib import Path

import datasets
import torch
from colpali_engine.compression.token_pooling import HierarchicalTokenPooler
from vidore_benchmark.retrievers.colpali_retriever import ColPaliRetriever

DATA = Path(__file__).resolve().parents[1] / "vidore"
OUT = Path(__file__).resolve().parent / "vidore_run.json"


def made_up(count: int, lengths: list[int], dim: int, seed: int, dtype: torch.dtype) -> list[torch.Tensor]:
    """Embeddings of values in [-1, 1] from a formula (no RNG), some of them all negative against a query."""
    return [
        torch.sin(torch.arange(length * dim, dtype=torch.float64).reshape(length, dim) * (0.37 + 0.11 * i) + seed).to(
            dtype
        )
        for i, length in zip(range(count), lengths)
    ]


def maxsim_cases() -> list[dict]:
    from colpali_engine.utils.processing_utils import BaseVisualRetrieverProcessor

    cases = []
    for dtype in ("float32", "bfloat16"):
        queries = made_up(3, [2, 5, 3], 6, 1, getattr(torch, dtype))
        pages = made_up(5, [4, 1, 7, 2, 3], 6, 2, getattr(torch, dtype))
        for batch_size in (128, 2):
            scores = BaseVisualRetrieverProcessor.score_multi_vector(
                queries, pages, batch_size=batch_size, device="cpu"
            )
            cases.append({"dtype": dtype, "batch_size": batch_size, "scores": scores.tolist()})
    return cases


def main(model: str) -> None:
    retriever = ColPaliRetriever(pretrained_model_name_or_path=model, device="cpu")
    record = {
        "model": "tiny random-weight ColPali (PaliGemma config, 28x28 images, bf16)",
        "batch_passage": 4,
        "batch_query": 4,
        "batch_score": 128,
    }
    for version in ("v1", "v2"):
        if version == "v1":
            table = datasets.load_dataset("parquet", data_files=str(DATA / "v1/data/test-00000-of-00001.parquet"))[
                "train"
            ]
            queries = [q for q in dict.fromkeys(list(table["query"])) if q is not None]
            pages = list(table["image"])
        else:
            corpus = datasets.load_dataset("parquet", data_files=str(DATA / "v2/corpus/test-00000-of-00001.parquet"))[
                "train"
            ]
            query_table = datasets.load_dataset(
                "parquet", data_files=str(DATA / "v2/queries/test-00000-of-00001.parquet")
            )["train"]
            queries, pages = list(query_table["query"]), list(corpus["image"])
        q = retriever.forward_queries(queries, batch_size=4)
        p = retriever.forward_passages(pages, batch_size=4)
        scores = retriever.get_scores(q, p, batch_size=128)
        pooled = HierarchicalTokenPooler().pool_embeddings(p, pool_factor=2)
        record[version] = {
            "queries": queries,
            "scores": scores.tolist(),
            "pooled_scores": retriever.get_scores(q, pooled, batch_size=128).tolist(),
            "page_tokens": [len(page) for page in p],
            "pooled_page_tokens": [len(page) for page in pooled],
        }
    record["maxsim"] = maxsim_cases()
    OUT.write_text(json.dumps(record) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[2])
