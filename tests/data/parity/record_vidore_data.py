"""Writes tests/data/vidore/: made-up ViDoRe datasets in the hub's exact Parquet layouts, pages drawn here.

v1/data/test-00000-of-00001.parquet  ViDoRe V1's QA table (query, image, image_filename, answer)
v2/{corpus,queries,qrels}/test-00000-of-00001.parquet  ViDoRe V2's BEIR configs (corpus-id, query-id, score)
v3/{corpus,queries,qrels}/test-00000-of-00001.parquet  ViDoRe V3's (corpus_id, query_id, a query language)

Run with `datasets` and Pillow installed: python tests/data/parity/record_vidore_data.py
"""

import io
from pathlib import Path

import datasets
from PIL import Image, ImageDraw

OUT = Path(__file__).resolve().parents[1] / "vidore"
COLORS = ["white", "lightyellow", "lightblue", "mistyrose", "honeydew", "lavender"]
TITLES = ["Olm harbour tolls", "Varn census 1911", "Pell lighthouse", "Fishing quotas", "Tide tables", "Salt exports"]


def page(number: int) -> bytes:
    image = Image.new("RGB", (64, 48), COLORS[number])
    draw = ImageDraw.Draw(image)
    draw.text((2, 2), TITLES[number][:10], fill="black")
    for bar in range(number + 1):
        draw.rectangle([4 + 9 * bar, 20, 10 + 9 * bar, 44 - 3 * bar], fill=(40 * bar, 90, 200 - 30 * bar))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def save(rows: dict, features: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_dict(rows, features=datasets.Features(features)).to_parquet(str(path))


def image(number: int) -> dict:
    return {"bytes": page(number), "path": f"page_{number}.png"}


v1 = [  # (query, page): page 1 is on two rows; a page asked nothing; a query asked of two pages (the last counts)
    ("Who collects the harbour tolls of Olm?", 0),
    ("How many people lived in Varn in 1911?", 1),
    (None, 2),
    ("Which lighthouse did Pell build?", 1),
    ("How many people lived in Varn in 1911?", 3),
    ("When is high tide at Olm?", 4),
    ("What did Varn export?", 5),
]
save(
    {
        "query": [query for query, _ in v1],
        "image": [image(number) for _, number in v1],
        "image_filename": [f"data/pages/page_{number}.png" for _, number in v1],
        "answer": ["-" if query else None for query, _ in v1],
    },
    {
        "query": datasets.Value("string"),
        "image": datasets.Image(),
        "image_filename": datasets.Value("string"),
        "answer": datasets.Value("string"),
    },
    OUT / "v1" / "data" / "test-00000-of-00001.parquet",
)

QUERIES = ["harbour tolls of Olm", "Varn census", "Pell lighthouse keeper", "tide at Olm", "salt trade"]
QRELS = [
    (0, 0, 2),
    (0, 3, 1),
    (1, 1, 1),
    (2, 2, 2),
    (2, 1, 0),
    (3, 4, 1),
    (3, 0, 1),
    (9, 5, 1),
]  # query 4 unjudged; 9 unasked
for version, corpus_id, query_id in (("v2", "corpus-id", "query-id"), ("v3", "corpus_id", "query_id")):
    folder = OUT / version
    save(
        {corpus_id: list(range(6)), "image": [image(number) for number in range(6)], "doc-id": ["report"] * 6},
        {corpus_id: datasets.Value("int64"), "image": datasets.Image(), "doc-id": datasets.Value("string")},
        folder / "corpus" / "test-00000-of-00001.parquet",
    )
    queries = {query_id: list(range(len(QUERIES))), "query": QUERIES}
    features = {query_id: datasets.Value("int64"), "query": datasets.Value("string")}
    if version == "v3":
        queries["language"] = ["english", "english", "french", "english", "french"]
        features["language"] = datasets.Value("string")
    save(queries, features, folder / "queries" / "test-00000-of-00001.parquet")
    save(
        {query_id: [q for q, _, _ in QRELS], corpus_id: [c for _, c, _ in QRELS], "score": [s for _, _, s in QRELS]},
        {query_id: datasets.Value("int64"), corpus_id: datasets.Value("int64"), "score": datasets.Value("int64")},
        folder / "qrels" / "test-00000-of-00001.parquet",
    )
