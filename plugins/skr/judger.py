"""SKR-kNN, the judger of FlashRAG's SKR (flashrag/judger/judger.py:37-128, commit 1ee5249): a question is
answered with retrieval when its nearest training questions were answered better with it.

The training questions (SKR's format: a JSON list of {"question", "judgement": "ir_better" | "ir_worse" |
"same"}) and the asked question are encoded by a SimCSE encoder (its pooler output, L2-normalised); among the
`topk` nearest training questions by L2 distance, delta = #ir_better - #ir_worse decides, against the
training set's own delta scaled to k (the paper's rule, as FlashRAG writes it).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from ragbench.api import ConfigError


def read_training(path: str) -> list[dict[str, str]]:
    try:
        items = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(
            f"skr training_data {path}: not readable as JSON ({type(exc).__name__}: {exc}); pass "
            'SKR\'s training file, a JSON list of {"question", "judgement"}'
        ) from None
    if (
        not isinstance(items, list)
        or not items
        or not all(
            isinstance(item, dict) and isinstance(item.get("question"), str) and isinstance(item.get("judgement"), str)
            for item in items
        )
    ):
        raise ConfigError(
            f"skr training_data {path}: a non-empty JSON list of "
            '{"question": str, "judgement": "ir_better"|"ir_worse"|"same"} is expected'
        )
    return items


def knn_rule(neighbours: list[str], training: Counter[str], topk: int) -> bool:
    """Retrieve or not, from the judgements of the nearest training questions (judger.py:105-122)."""
    delta = neighbours.count("ir_better") - neighbours.count("ir_worse")
    training_delta = training["ir_better"] - training["ir_worse"]
    threshold = int(training_delta * topk / sum(training.values()))
    if training_delta < 0:
        return not (delta < 0 and delta <= threshold)
    return delta > 0 and delta >= threshold


class SkrJudgement(TypedDict):
    """A question's judgement: whether to retrieve, and the nearest training questions' judgements, nearest first."""

    label: bool
    neighbours: list[str]


class SkrJudger:
    """SKR-kNN over `training_data` with the encoder in `folder` (float32, on the CPU)."""

    def __init__(
        self, folder: Path, training_data: str, topk: int = 5, max_length: int = 128, batch_size: int = 64
    ) -> None:
        from transformers import AutoModel, AutoTokenizer

        self.topk, self.max_length = topk, max_length
        self.training = read_training(training_data)
        self.labels = [item["judgement"].strip() for item in self.training]
        self.counts = Counter(self.labels)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(folder, use_fast=True)
            self.encoder = AutoModel.from_pretrained(folder).eval()
        except Exception as exc:  # a damaged or foreign folder: one line
            raise ConfigError(
                f"skr judger_model {folder}: could not be loaded ({type(exc).__name__}: {exc}); pass "
                "a SimCSE encoder folder, e.g. princeton-nlp/sup-simcse-bert-base-uncased"
            ) from None
        questions = [item["question"] for item in self.training]
        self.index = np.concatenate(
            [self.encode(questions[i : i + batch_size]) for i in range(0, len(questions), batch_size)]
        )

    def encode(self, texts: list[str]) -> Any:
        import torch

        with torch.inference_mode():
            inputs = self.tokenizer(
                texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
            )
            pooled = self.encoder(**inputs, return_dict=True).pooler_output
            return torch.nn.functional.normalize(pooled, dim=-1).float().numpy()

    def judge(self, question: str) -> SkrJudgement:
        """{"label": retrieve or not, "neighbours": the nearest training questions' judgements, nearest first}."""
        distances = ((self.index - self.encode([question])) ** 2).sum(axis=1)
        nearest = np.argsort(distances, kind="stable")[: self.topk]
        neighbours = [self.labels[i] for i in nearest]
        return {"label": knn_rule(neighbours, self.counts, self.topk), "neighbours": neighbours}
