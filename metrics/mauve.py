"""MAUVE as ALCE eval.py `compute_mauve` computes it (package mauve-text), corpus-level.

Texts (upstream's construction): `' '.join((question + " " + text.strip()).split()[:100])` with
trailing ASCII punctuation stripped; p = the references (`answer`), q = the citation-free
outputs. Settings as upstream: max_text_length 512, batch_size 8, every other mauve-text
argument at its default (num_buckets n/10, k-means seed 25 ...). The featurizer is any Hugging
Face model folder or cached name (upstream: gpt2-large), featurized exactly as mauve-text does
(last hidden state of the last token). ALCE's maintainers warn that MAUVE moves between
environments (ALCE issue #25): results carry `"unstable": true` in the metric config.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, Metric, MetricDeclaration, SampleRecord
from ragbench.api.data import JsonObject
from ragbench.api.text import remove_citations


def mauve_text(question: str, text: str) -> str:
    return " ".join((question + " " + text.strip()).split()[:100]).rstrip(string.punctuation)


def mauve_texts(samples: list[SampleRecord]) -> tuple[list[str], list[str]]:
    """(human, model) texts of the scored samples, in data order."""
    human = [mauve_text(s.question, s.gold["answer"]) for s in samples]
    model = [mauve_text(s.question, remove_citations(s.answer)) for s in samples]
    return human, model


def _import_mauve() -> Any:
    try:
        import mauve
    except ImportError as exc:
        raise ConfigError(f"MAUVE needs mauve-text ({exc}); run `pip install ragbench[alce]`") from exc
    return mauve


class Featurizer:
    """mauve-text's featurization (utils.get_model / featurize_tokens_from_model) for any model."""

    def __init__(self, model: str, device: str = "cpu", max_text_length: int = 512, batch_size: int = 8) -> None:
        from transformers import AutoModel, AutoTokenizer

        local = Path(model).expanduser().exists()
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=local)
            self.model = (
                AutoModel.from_pretrained(model, pad_token_id=self.tokenizer.eos_token_id, local_files_only=local)
                .to(device)
                .eval()
            )
        except Exception as exc:
            raise RuntimeError(
                f"MAUVE featurizer '{model}' cannot be loaded ({type(exc).__name__}: {exc}); "
                "pass --metric-arg mauve.featurizer=PATH to a local model folder"
            ) from exc
        self.max_text_length, self.batch_size = max_text_length, batch_size

    def __call__(self, texts: list[str]) -> Any:
        from mauve.utils import featurize_tokens_from_model

        tokens = [
            self.tokenizer.encode(text, return_tensors="pt", truncation=True, max_length=self.max_text_length)
            for text in texts
            if len(text) > 0
        ]
        return featurize_tokens_from_model(self.model, tokens, self.batch_size).detach().cpu().numpy()


def mauve_from_features(p_features: Any, q_features: Any) -> float:
    """mauve.compute_mauve at ALCE's settings (featurization aside), x100."""
    mauve: float = _import_mauve().compute_mauve(p_features=p_features, q_features=q_features).mauve
    return 100 * mauve


class Mauve(Metric):
    name = "mauve"
    declares = MetricDeclaration(
        gold_needs=("long_answer",),
        corpus_keys=("mauve",),
        value_range=(0, 100),
    )

    def __init__(
        self, featurizer: str = "gpt2-large", device: str = "cpu", max_text_length: int = 512, batch_size: int = 8
    ) -> None:
        _import_mauve()
        self.featurizer, self.device = str(featurizer), str(device)
        self.max_text_length, self.batch_size = int(max_text_length), int(batch_size)

    def corpus(self, samples: list[SampleRecord], seed: int) -> dict[str, float | None]:
        if not samples:
            return {"mauve": None}
        human, model = mauve_texts(samples)
        featurize = Featurizer(self.featurizer, self.device, self.max_text_length, self.batch_size)
        return {"mauve": mauve_from_features(featurize(human), featurize(model))}

    def config(self) -> JsonObject:
        return {
            "name": self.name,
            "featurizer": self.featurizer,
            "max_text_length": self.max_text_length,
            "batch_size": self.batch_size,
            "unstable": True,
        }
