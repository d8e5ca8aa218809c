"""Small corpora in the real upstream formats, for the retrieval tests."""

from __future__ import annotations

import csv
import random
from pathlib import Path

from click.testing import CliRunner

from ragbench.api import Document
from ragbench.testing import cli

WORDS = (
    "river mountain king queen castle war peace music song album artist silence sound garden "
    "winter summer running runs ran prophet priest brother moses election senate novel author "
    "the a of and is was in to"
).split()


def passages(n: int, seed: int = 0) -> list[Document]:
    """`n` passages of random words (ids 1..n, DPR style); a few repeat so scores tie."""
    rng = random.Random(seed)
    docs = [
        Document(id=str(i), title=f"Title {i % 17}", text=" ".join(rng.choices(WORDS, k=rng.randint(3, 30))))
        for i in range(1, n + 1)
    ]
    docs[4] = Document(id="5", title="", text="the a of")  # stopwords only: no BM25 tokens
    docs[9] = Document(id="10", title=docs[8].title, text=docs[8].text)  # a duplicate passage
    return docs


def write_dpr_tsv(path: Path, docs: list[Document]) -> Path:
    """psgs_w100.tsv layout: header id, text, title; csv quoting as DPR's files have it."""
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["id", "text", "title"])
        writer.writerows([doc.id, doc.text, doc.title] for doc in docs)
    return path


def shard_index(index: Path, shards: int) -> Path:
    """`ragbench index shard --index INDEX --shards S`, as a user splits an index: the shards' folder it names."""
    done = CliRunner().invoke(cli, ["index", "shard", "--index", str(index), "--shards", str(shards)])
    assert done.exit_code == 0, done.output
    said = done.output.strip().splitlines()[-1]  # "S shards of INDEX in FOLDER"
    return Path(said.rpartition(" in ")[2])
