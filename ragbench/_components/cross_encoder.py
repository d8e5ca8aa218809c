"""The `cross_encoder` reranker: sentence-transformers' `CrossEncoder` over (query, passage) pairs, as
FlashRAG's `CrossReranker` scores them (flashrag/retriever/reranker.py; its basic_config.yaml defaults:
rerank_max_length 512, rerank_batch_size 256, rerank_topk 5 kept of retrieval_topk 5 retrieved).
Scores are `CrossEncoder.predict`'s (a one-label model's logit through its sigmoid, as the model's
authors set it; FlashRAG keeps the logit: the same order)."""

from __future__ import annotations

from typing import Annotated, Any

from annotated_types import Ge

from .._values.json_values import JsonObject
from .base import Reranker, local_model


class CrossEncoderReranker(Reranker):
    name = "cross_encoder"

    def __init__(
        self,
        model: str | None = None,
        retrieval_topk: Annotated[int, Ge(1)] = 5,
        max_length: Annotated[int, Ge(1)] = 512,
        batch_size: Annotated[int, Ge(1)] = 256,
        device: str | None = None,
    ) -> None:
        self.model_path = local_model(model)
        self.retrieval_topk = int(retrieval_topk)
        self.max_length = int(max_length)
        self.max_batch_size = int(batch_size)
        self.device = device
        self._model: Any = None

    def load(self) -> None:
        from sentence_transformers import CrossEncoder

        if self._model is None:
            self._model = CrossEncoder(
                self.model_path, max_length=self.max_length, device=self.device, local_files_only=True
            )

    def score_pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        self.load()
        if not pairs:
            return []
        scores = self._model.predict(pairs, batch_size=self.max_batch_size, show_progress_bar=False)
        return [float(score) for score in scores]

    def metadata(self) -> JsonObject:
        return {"reranker": self.name, "model": self.model_path, "max_length": self.max_length}

    def close(self) -> None:
        self._model = None
