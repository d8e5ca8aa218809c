"""Records tests/data/parity/vidore_figures.json: vidore-benchmark's figures, every one it outputs (nDCG, MAP, Recall,
P, MRR and the 21 naucs_at_*), on score matrices made up to reach its corners, with the datasets they score, which
it writes too:

- tests/data/vidore/ties: a BEIR dataset (V2's layout) of 150 pages and 6 queries whose scores tie across the
  100th place (mteb's MRR ranks a tie in corpus order, pytrec_eval by page id descending) and go below 0 (upstream's
  results floor a page's score at 0 unless it is the corpus's first row's: `max(results.get(id, 0), score)`);
- tests/data/vidore/v1_twins and v1_twins_swapped: V1's QA layout, a filename on two rows with two different
  pictures, in one order and the other (upstream scores every row and keeps each filename's best).

Each page (row) is drawn with its number in its pixels, so that a test's stand-in encoder can tell it apart. The
evaluators run unchanged (ViDoReEvaluatorBEIR, ViDoReEvaluatorQA), their retriever a stand-in whose scores are the
matrix, as record_vidore_metrics.py does.

Run in a venv with vidore-benchmark 5.0.0 and its pins (mteb 1.16.5, datasets 3.6.0, transformers 4.57.6,
pytrec-eval-terrier 0.5.11, numpy 2.4.6, scikit-learn 1.9.1), from this folder:
    python record_vidore_figures.py
"""

import io
import json
import math
from pathlib import Path

import datasets
import torch
from PIL import Image
from vidore_benchmark.evaluation.vidore_evaluators import ViDoReEvaluatorBEIR, ViDoReEvaluatorQA
from vidore_benchmark.retrievers.base_vision_retriever import BaseVisionRetriever

DATA = Path(__file__).resolve().parents[1] / "vidore"
OUT = Path(__file__).resolve().parent / "vidore_figures.json"
PAGES = 150


class Recorded(BaseVisionRetriever):
    """The score matrix as the retriever's scores (the embeddings are placeholders the evaluator passes on)."""

    def __init__(self, scores):
        super().__init__(use_visual_embedding=True)
        self.scores = torch.tensor(scores, dtype=torch.float32)

    def forward_queries(self, queries, batch_size, **kwargs):
        return [torch.zeros(1, 1) for _ in queries]

    def forward_passages(self, passages, batch_size, **kwargs):
        return [torch.zeros(1, 1) for _ in passages]

    def get_scores(self, query_embeddings, passage_embeddings, batch_size=None):
        assert self.scores.shape == (len(query_embeddings), len(passage_embeddings))
        return self.scores


def picture(number: int) -> dict:
    """A 4x4 page whose pixels spell its number."""
    image = Image.new("RGB", (4, 4), (number % 256, number // 256, 7))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return {"bytes": buffer.getvalue(), "path": f"page_{number}.png"}


def save(rows: dict, features: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_dict(rows, features=datasets.Features(features)).to_parquet(str(path))


def table(path: Path):
    return datasets.load_dataset("parquet", data_files=sorted(str(p) for p in path.glob("*.parquet")))["train"]


def tie_scores() -> list[list[float]]:
    """6 queries x 150 pages, values exact in float32 (quarters)."""
    rows = []
    tied = [1.0] * PAGES  # q0: every page ties at 1, page 7 above; "10" is 11th in corpus order, near last by id
    tied[7] = 2.0
    rows.append(tied)
    negative = [-0.25 * (1 + page % 5) for page in range(PAGES)]  # q1: below 0 (floored to 0 but for page 0)
    negative[42] = 0.5
    rows.append(negative)
    for query in range(2, 6):  # quantised waves: ties everywhere, some below 0
        rows.append([round(math.sin(query * 1.7 + page * 0.37) * 6) / 4 for page in range(PAGES)])
    return rows


def write_ties() -> dict:
    folder = DATA / "ties"
    save(
        {"corpus-id": list(range(PAGES)), "image": [picture(n) for n in range(PAGES)]},
        {"corpus-id": datasets.Value("int64"), "image": datasets.Image()},
        folder / "corpus" / "test-00000-of-00001.parquet",
    )
    queries = ["tolls", "census", "lighthouse", "tides", "salt", "quotas"]
    save(
        {"query-id": list(range(len(queries))), "query": queries},
        {"query-id": datasets.Value("int64"), "query": datasets.Value("string")},
        folder / "queries" / "test-00000-of-00001.parquet",
    )
    qrels = [(0, 10, 1), (1, 3, 1), (1, 42, 2), (2, 5, 1), (2, 99, 1), (3, 120, 2), (4, 0, 1), (5, 64, 1), (5, 1, 1)]
    save(
        {
            "query-id": [q for q, _, _ in qrels],
            "corpus-id": [c for _, c, _ in qrels],
            "score": [s for _, _, s in qrels],
        },
        {"query-id": datasets.Value("int64"), "corpus-id": datasets.Value("int64"), "score": datasets.Value("int64")},
        folder / "qrels" / "test-00000-of-00001.parquet",
    )
    scores = tie_scores()
    beir = {config: table(folder / config) for config in ("corpus", "queries", "qrels")}
    metrics = ViDoReEvaluatorBEIR(Recorded(scores)).evaluate_dataset(beir, batch_query=4, batch_passage=4)
    return {"queries": queries, "rows": scores, "metrics": metrics}


TWINS = [  # (query, filename, picture): a.png on rows 0 and 2, two pictures; b.png on rows 1 and 4, one picture
    ("What are Olm's tolls?", "a.png", 0),
    ("Who counted Varn?", "b.png", 1),
    (None, "a.png", 2),
    ("Where is Pell?", "c.png", 3),
    ("When is high tide?", "b.png", 1),
    ("What did Varn export?", "d.png", 4),
]
TWIN_SCORES = {  # query -> each picture's score: a.png's second picture (2) scores above its first (0) for some
    "What are Olm's tolls?": [1.0, 2.0, 3.0, 1.5, 2.5],
    "Who counted Varn?": [2.0, 1.0, 0.5, 3.0, 2.0],
    "Where is Pell?": [0.5, 1.0, 2.5, 2.0, 0.25],
    "When is high tide?": [-1.0, 0.75, 0.75, -0.5, 1.0],
    "What did Varn export?": [1.0, 1.0, 1.0, 2.0, 1.0],
}


def write_twins(name: str, rows: list) -> dict:
    save(
        {
            "query": [query for query, _, _ in rows],
            "image": [picture(number) for _, _, number in rows],
            "image_filename": [filename for _, filename, _ in rows],
            "answer": ["-" if query else None for query, _, _ in rows],
        },
        {
            "query": datasets.Value("string"),
            "image": datasets.Image(),
            "image_filename": datasets.Value("string"),
            "answer": datasets.Value("string"),
        },
        DATA / name / "data" / "test-00000-of-00001.parquet",
    )
    queries = [query for query in dict.fromkeys(query for query, _, _ in rows) if query is not None]
    scores = [[TWIN_SCORES[query][number] for _, _, number in rows] for query in queries]
    ds = table(DATA / name / "data")
    metrics = ViDoReEvaluatorQA(Recorded(scores)).evaluate_dataset(ds, batch_query=4, batch_passage=4)
    return {"queries": queries, "rows": scores, "metrics": metrics}


swapped = [TWINS[2], TWINS[1], TWINS[0], *TWINS[3:]]
record = {
    "ties": write_ties(),
    "v1_twins": write_twins("v1_twins", TWINS),
    "v1_twins_swapped": write_twins("v1_twins_swapped", swapped),
    "evaluator": "vidore-benchmark 5.0.0 (mteb 1.16.5, pytrec-eval-terrier 0.5.11, numpy 2.4.6, scikit-learn 1.9.1)",
}
OUT.write_text(json.dumps(record) + "\n", encoding="utf-8")
