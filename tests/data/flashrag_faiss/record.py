"""Records what FlashRAG's own code does with the tiny encoder and corpus of tests/support/flashrag_faiss_fixtures.py.

Run with a Python that has FlashRAG installed (its code unchanged; recorded at commit 1ee5249):

    python tests/data/flashrag_faiss/record.py

Writes here: the corpus, one index per case built by FlashRAG's `Index_Builder` (the files tests search), and
expected.json, the ids and scores FlashRAG's `DenseRetriever.batch_search` returns for the fixture's queries.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from support.flashrag_faiss_fixtures import QUERIES, write_corpus, write_tiny_bert  # noqa: E402

# (retrieval_method, faiss_type, instruction, pooling at build time): e5 and dpr with FlashRAG's own rules,
# bge with an instruction given (FlashRAG would otherwise judge each batch's language with langid)
CASES = [("e5", "Flat", None, "mean"), ("bge", "HNSW8", "Represent:", "cls"), ("dpr", "IVF2,Flat", None, "pooler")]
TOPK = 5


def main() -> None:
    from flashrag.config import Config
    from flashrag.retriever.index_builder import Index_Builder
    from flashrag.retriever.retriever import DenseRetriever

    corpus = write_corpus(HERE / "corpus.jsonl")
    expected = {"queries": QUERIES, "topk": TOPK, "cases": {}}
    with tempfile.TemporaryDirectory() as scratch:
        model = write_tiny_bert(Path(scratch) / "tiny-bert")
        for method, faiss_type, instruction, pooling in CASES:
            build = Path(scratch) / method
            Index_Builder(
                retrieval_method=method,
                model_path=str(model),
                corpus_path=str(corpus),
                save_dir=str(build),
                max_length=180,
                batch_size=16,
                use_fp16=False,
                pooling_method=pooling,
                instruction=instruction,
                faiss_type=faiss_type,
            ).build_index()
            index = HERE / f"{method}_{faiss_type}.index"
            shutil.copyfile(build / f"{method}_{faiss_type}.index", index)
            config = Config(
                config_dict={
                    "retrieval_method": method,
                    "retrieval_model_path": str(model),
                    "index_path": str(index),
                    "corpus_path": str(corpus),
                    "instruction": instruction,
                    "retrieval_topk": TOPK,
                    "retrieval_use_fp16": False,
                    "retrieval_batch_size": 256,
                    "disable_save": True,
                    "save_dir": scratch,
                    "data_dir": scratch,
                    "gpu_id": "",
                }
            )
            retriever = DenseRetriever(config)
            docs, scores = retriever.batch_search(QUERIES, num=TOPK, return_score=True)
            expected["cases"][index.name] = {
                "method": method,
                "instruction": instruction,
                "pooling": config["retrieval_pooling_method"],
                "ids": [[doc["id"] for doc in row] for row in docs],
                "scores": scores,
            }
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
