"""A tiny random Qwen3 encoder, its tokenizer and a corpus of BrowseComp-Plus rows, the same bytes and weights
wherever they are made.

Imported by tests/test_qwen3_embedding.py and by tests/data/browsecomp_plus/dense/record.py, which runs in a venv
with Tevatron installed (so nothing here imports ragbench): the weights come from numpy's legacy RandomState, whose
stream never changes, so the encoder a test builds is the one the recorded index was built with.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

SCALE = 0.2
TOPICS = "paris france river mountain music guitar piano ocean whale desert camel forest tiger planet mars moon".split()
TEMPLATE = "the {a} of the {b} is near the {c} and the {d}"
QUERIES = [
    "where is the river near paris",
    "the whale of the ocean",
    "piano and guitar music",
    "mars and the moon",
    "a tiger in the forest",
    "camel in the desert",
]
# BrowseComp-Plus's faiss_searcher.py `--task-prefix` default
TASK_PREFIX = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
EOS = "<|endoftext|>"


def corpus_rows() -> list[dict]:
    """24 passages, no two alike, as Tevatron/browsecomp-plus-corpus holds them: {docid, text, url}."""
    rows = []
    for i in range(24):
        words = [TOPICS[(i * step + 3 + (i // 16) * (step + 1)) % len(TOPICS)] for step in (1, 3, 7, 11)]
        text = TEMPLATE.format(a=words[0], b=words[1], c=words[2], d=words[3])
        rows.append({"docid": str(500 + 7 * i), "text": text, "url": f"https://example.org/{i}"})
    return rows


def write_corpus(path: Path) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in corpus_rows()), encoding="utf-8")
    return path


def vocabulary() -> list[str]:
    words: set[str] = set()
    for text in [row["text"] for row in corpus_rows()] + QUERIES + [TASK_PREFIX]:
        words.update(re.findall(r"\w+|[^\w\s]|\s", text))
    return ["<unk>", EOS] + sorted(words)


def write_tiny_qwen3(folder: Path, seed: int = 0) -> Path:
    """A 2-layer Qwen3 of width 32 with random weights, and a word-level tokenizer (words, punctuation marks, spaces
    and newlines) that ends every input with <|endoftext|> and pads with it, as Qwen3-Embedding's tokenizer does."""
    import torch
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3Model

    folder.mkdir(parents=True, exist_ok=True)
    words = {word: number for number, word in enumerate(vocabulary())}
    config = Qwen3Config(
        vocab_size=len(words),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        max_position_embeddings=256,
        pad_token_id=words[EOS],
        eos_token_id=words[EOS],
        bos_token_id=words[EOS],
    )
    model = Qwen3Model(config)
    state = np.random.RandomState(seed)
    with torch.no_grad():
        for name, parameter in sorted(model.named_parameters()):
            values = state.standard_normal(tuple(parameter.shape)).astype(np.float32) * SCALE
            if "norm" in name:  # a unit norm layer, slightly moved
                values = values * 0.5 + 1.0
            parameter.copy_(torch.from_numpy(values))
    model.save_pretrained(folder)
    tokenizer = Tokenizer(models.WordLevel(words, unk_token="<unk>"))
    # each space and newline a token of its own, as byte-level BPE keeps them: a space more changes the input
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(r"\s"), behavior="isolated"), pre_tokenizers.Punctuation(behavior="isolated")]
    )
    tokenizer.post_processor = processors.TemplateProcessing(single=f"$A {EOS}", special_tokens=[(EOS, words[EOS])])
    PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token=EOS, eos_token=EOS, unk_token="<unk>"
    ).save_pretrained(folder)
    return folder
