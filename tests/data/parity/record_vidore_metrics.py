"""Adds vidore-benchmark's figures to tests/data/parity/vidore_run.json: its evaluators (ViDoReEvaluatorQA for V1,
ViDoReEvaluatorBEIR for V2), run unchanged on tests/data/vidore, their retriever a stand-in whose scores are the
ones record_vidore_run.py recorded from vidore-benchmark's ColPaliRetriever (the tiny ColPali); and its
SigLIPRetriever's scores with the tiny SigLIP.

Run in a venv with vidore-benchmark 5.0.0 and its pins (mteb 1.16.5, transformers 4.x, datasets 3.x):
    python record_vidore_metrics.py
"""

import json
from pathlib import Path

import datasets
import torch
from vidore_benchmark.evaluation.vidore_evaluators import ViDoReEvaluatorBEIR, ViDoReEvaluatorQA
from vidore_benchmark.retrievers.base_vision_retriever import BaseVisionRetriever

DATA = Path(__file__).resolve().parents[1] / "vidore"
OUT = Path(__file__).resolve().parent / "vidore_run.json"


class Recorded(BaseVisionRetriever):
    """The recorded score matrix as the retriever's scores (the embeddings are placeholders the evaluator passes on)."""

    def __init__(self, scores):
        super().__init__(use_visual_embedding=True)
        self.scores = torch.tensor(scores)

    def forward_queries(self, queries, batch_size, **kwargs):
        return [torch.zeros(1, 1) for _ in queries]

    def forward_passages(self, passages, batch_size, **kwargs):
        return [torch.zeros(1, 1) for _ in passages]

    def get_scores(self, query_embeddings, passage_embeddings, batch_size=None):
        assert self.scores.shape == (len(query_embeddings), len(passage_embeddings))
        return self.scores


def table(path: Path):
    return datasets.load_dataset("parquet", data_files=sorted(str(p) for p in path.glob("*.parquet")))["train"]


record = json.loads(OUT.read_text(encoding="utf-8"))
for key in ("scores", "pooled_scores"):
    v1 = ViDoReEvaluatorQA(Recorded(record["v1"][key]))
    record["v1"][f"metrics_{key}"] = v1.evaluate_dataset(table(DATA / "v1" / "data"), batch_query=4, batch_passage=4)
    # a query no qrels judge crashes the evaluator (mteb 1.16's nAUC: IndexError, its results outnumber its scores):
    # it is given the judged queries, the ones pytrec_eval scores, and their rows of the scores
    beir = {config: table(DATA / "v2" / config) for config in ("corpus", "queries", "qrels")}
    judged = set(beir["qrels"]["query-id"])
    rows = [i for i, query_id in enumerate(beir["queries"]["query-id"]) if query_id in judged]
    beir["queries"] = beir["queries"].select(rows)
    v2 = ViDoReEvaluatorBEIR(Recorded([record["v2"][key][i] for i in rows]))
    record["v2"][f"metrics_{key}"] = v2.evaluate_dataset(beir, batch_query=4, batch_passage=4, batch_score=128)


def siglip_scores(model: Path) -> dict:
    """vidore-benchmark's SigLIPRetriever (float32, raw dot product) with tests/data/vidore/tiny-siglip (a tiny
    random-weight SigLIP config, 28x28 images) over v2: here, where its transformers 4 runs it (under transformers 5
    its `get_text_features` returns an output object, which its `torch.unbind` refuses)."""
    from vidore_benchmark.retrievers.siglip_retriever import SigLIPRetriever

    retriever = SigLIPRetriever(pretrained_model_name_or_path=str(model), device="cpu")
    queries = list(table(DATA / "v2" / "queries")["query"])
    q = retriever.forward_queries(queries, batch_size=4)
    p = retriever.forward_passages(list(table(DATA / "v2" / "corpus")["image"]), batch_size=4)
    return {"queries": queries, "scores": retriever.get_scores(q, p).tolist()}


record["siglip"] = siglip_scores(DATA / "tiny-siglip")
record["evaluator"] = "vidore-benchmark 5.0.0 (mteb 1.16.5, pytrec-eval-terrier)"
OUT.write_text(json.dumps(record) + "\n", encoding="utf-8")
