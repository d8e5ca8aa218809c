"""A tiny random BERT encoder and a FlashRAG-format corpus, the same bytes and weights wherever they are made.

Imported by tests/retrieval/test_faiss_index.py and by tests/data/flashrag_faiss/record.py, which runs in a venv with
FlashRAG installed (so nothing here imports ragbench): the weights come from numpy's legacy RandomState, whose
stream never changes, so the encoder a test builds is the one FlashRAG's index was built with.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

TOPICS = [
    "paris",
    "france",
    "river",
    "mountain",
    "music",
    "guitar",
    "piano",
    "ocean",
    "whale",
    "desert",
    "camel",
    "forest",
    "tiger",
    "planet",
    "mars",
    "moon",
    "physics",
    "chemistry",
    "bread",
    "cheese",
]
SCALE = 0.5
TEMPLATE = "the {a} of the {b} is near the {c} and the {d}"


def corpus_rows() -> list[dict]:
    """40 passages as FlashRAG's corpora hold them: `contents` is a quoted title, a newline, the text."""
    rows = []
    for i in range(40):
        words = [TOPICS[(i * step + 3) % len(TOPICS)] for step in (1, 3, 7, 11)]
        text = TEMPLATE.format(a=words[0], b=words[1], c=words[2], d=words[3])
        rows.append({"id": str(1000 + i), "contents": f'"{words[0].title()} {i}"\n{text}'})
    return rows


QUERIES = [
    "where is the river near paris",
    "the whale of the ocean",
    "piano and guitar music",
    "mars and the moon",
    "bread with cheese in france",
    "a tiger in the forest",
    "physics of the planet",
    "camel in the desert",
]


def write_corpus(path: Path) -> Path:
    """The corpus as JSONL with a blank line and a line of spaces among the rows (FlashRAG's loader skips both)."""
    lines = [json.dumps(row) for row in corpus_rows()]
    lines.insert(5, "")
    lines.insert(12, "   ")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def vocabulary() -> list[str]:
    words = set()
    for text in [row["contents"] for row in corpus_rows()] + QUERIES + ["query", "passage", "represent", ":"]:
        words.update(re.findall(r"\w+|[^\w\s]", text.lower()))
    return ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(words)


def write_tiny_bert(folder: Path, seed: int = 0) -> Path:
    """A 2-layer BERT of width 32 with random weights (with its pooler) and a WordPiece tokenizer over the words above."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    config = BertConfig(
        vocab_size=len(vocabulary()),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    model = BertModel(config)
    state = np.random.RandomState(seed)
    with torch.no_grad():
        for name, parameter in sorted(model.named_parameters()):
            values = state.standard_normal(tuple(parameter.shape)).astype(np.float32) * SCALE
            if "LayerNorm" in name:  # a unit norm layer, slightly moved: random norm weights make every text alike
                values = values * 0.1 + (1.0 if name.endswith("weight") else 0.0)
            parameter.copy_(torch.from_numpy(values))
    model.save_pretrained(folder)
    words = {word: number for number, word in enumerate(vocabulary())}
    BertTokenizerFast(vocab=words, do_lower_case=True).save_pretrained(folder)
    return folder
