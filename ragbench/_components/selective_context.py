"""The `selective_context` refiner: Selective-Context (Li et al., 2023), which the `llmlingua` package does
not provide, implemented here after FlashRAG's copy of the authors' code
(flashrag/refiner/selective_context_compressor.py; SelectiveContextRefiner, reduce_ratio 0.5). The
documents as `Doc i(Title: t) text` lines, whitespace collapsed, are cut into sentences; each token's
self-information -log p(token | the sentence before it) comes from a local causal LM (GPT-2 in FlashRAG),
the sentence starting after the model's begin/end-of-text token; the units (tokens, or sentences by their
mean) below the `reduce_ratio` percentile of self-information are dropped.

Departures, said in docs/retrieval.md: FlashRAG's default unit is the noun phrase of spaCy's en_core_web_lg
(`merge_noun_chunks`); here the units are tokens (`reduce_level=token`, the default) or sentences
(`reduce_level=sent`, which FlashRAG's copy cannot run: `mask_a_sent` reads attributes it never sets; a
dropped sentence is its "<...some content omitted.>"). A sentence after the first starts with a space, as
FlashRAG's phrase units do."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from annotated_types import Ge, Lt

from .._shared.flashrag import flashrag_reference
from .._types import Document
from .._values.json_values import JsonObject
from .base import Refiner, local_model, local_transformers

SENTENCE_END = re.compile(r"(?<!\w\.\w.)(?<![A-Z][a-z]\.)(?<=\.|\?)\s")
SENTENCE_MASK = "<...some content omitted.>"
MAX_TOKENS = 1024  # of one sentence, as FlashRAG's tokenizer call cuts it


class SelectiveContextRefiner(Refiner):
    name = "selective_context"
    max_batch_size = 1

    def __init__(
        self,
        model: str | None = None,
        reduce_ratio: Annotated[float, Ge(0), Lt(1)] = 0.5,
        reduce_level: Literal["token", "sent"] = "token",
        device: str = "cpu",
    ) -> None:
        self.model_path = local_model(model)
        self.reduce_ratio, self.reduce_level, self.device = float(reduce_ratio), reduce_level, device
        self._model: Any = None
        self._tokenizer: Any = None

    def load(self) -> None:
        if self._model is None:
            self._tokenizer, self._model = local_transformers("AutoModelForCausalLM", self.model_path, self.device)

    def self_information(self, sentence: str) -> tuple[list[str], list[float]]:
        """The sentence's tokens (as decoded one by one) and each one's -log p under the model."""
        import torch

        start = self._tokenizer.bos_token or self._tokenizer.eos_token or ""
        encoding = self._tokenizer(
            start + sentence, max_length=MAX_TOKENS, truncation=True, add_special_tokens=False, return_tensors="pt"
        ).to(self.device)
        with torch.inference_mode():
            logits = self._model(**encoding).logits
        ids = encoding["input_ids"]
        info = -torch.log_softmax(logits.float(), dim=-1)[:, :-1].gather(-1, ids[:, 1:].unsqueeze(-1))
        return [self._tokenizer.decode(token) for token in ids[0, 1:].tolist()], info.reshape(-1).tolist()

    def compress(self, text: str) -> str:
        import numpy as np

        sentences = [s.strip() for s in SENTENCE_END.split(re.sub(r"\s+", " ", text)) if s.strip()]
        units: list[str] = []
        infos: list[float] = []
        for number, sentence in enumerate(sentences):
            tokens, info = self.self_information(sentence)
            if self.reduce_level == "sent":
                units.append(sentence)
                infos.append(float(np.mean(info)) if info else float("nan"))
                continue
            if number and tokens:
                tokens[0] = f" {tokens[0]}"
            units.extend(tokens)
            infos.extend(info)
        if not units:
            return ""
        threshold = np.nanpercentile(infos, self.reduce_ratio * 100)
        if self.reduce_level == "sent":
            return " ".join(SENTENCE_MASK if info < threshold else unit for unit, info in zip(units, infos))
        return "".join(unit for unit, info in zip(units, infos) if not info < threshold)

    def refine_batch(self, items: list[tuple[str, list[Document]]]) -> list[str]:
        self.load()
        return [self.compress(flashrag_reference(docs)) for _, docs in items]

    def metadata(self) -> JsonObject:
        return {
            "refiner": self.name,
            "model": self.model_path,
            "reduce_ratio": self.reduce_ratio,
            "reduce_level": self.reduce_level,
        }

    def close(self) -> None:
        self._model = self._tokenizer = None
