"""Adaptive-RAG's query-complexity classifier as FlashRAG's `AdaptiveJudger` runs it
(flashrag/judger/judger.py:131-199, commit 1ee5249): a T5 model whose first decoded token, among "A", "B" and
"C", is the label (A: no retrieval, B: single-step, C: multi-step)."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from ragbench.api import ConfigError

LABELS = ("A", "B", "C")


class ComplexityJudgement(TypedDict):
    """A question's complexity: its label ("A" | "B" | "C") and the softmax over the three labels' first-step
    scores."""

    label: str
    probabilities: list[float]


class ComplexityClassifier:
    """The classifier in `folder` (e.g. illuminoplanet/adaptive-rag-classifier, run_exp.py:544), on the CPU."""

    def __init__(self, folder: Path, max_length: int = 512) -> None:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(folder)
            self.model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
        except Exception as exc:  # a damaged or foreign folder: one line
            raise ConfigError(
                f"adaptive_rag judger_model {folder}: could not be loaded ({type(exc).__name__}: "
                f"{exc}); pass a T5 classifier folder, e.g. illuminoplanet/adaptive-rag-classifier"
            ) from None
        self.max_length = max_length
        # judger.py:181-184: the first token id of each label's encoding
        self.label_ids = [self.tokenizer(label).input_ids[0] for label in LABELS]

    def judge(self, question: str) -> ComplexityJudgement:
        """{"label": "A" | "B" | "C", "probabilities": softmax over the three labels' first-step scores}."""
        import torch

        with torch.inference_mode():
            inputs = self.tokenizer(
                [question.strip()], truncation=True, max_length=self.max_length, return_tensors="pt"
            )
            start = torch.tensor([[self.model.config.decoder_start_token_id]])
            scores = self.model(**inputs, decoder_input_ids=start).logits[0, -1, self.label_ids]
            probabilities = torch.softmax(scores.float(), dim=0).tolist()
        best = max(range(len(LABELS)), key=lambda i: (probabilities[i], -i))  # numpy argmax: the first on ties
        return {"label": LABELS[best], "probabilities": [round(p, 6) for p in probabilities]}
