"""RECOMP's compressors (Xu et al., 2023) as FlashRAG runs them (flashrag/refiner/refiner.py; settings of
examples/methods/run_exp.py): both read each document's text (FlashRAG's `contents` without its title line)
and give one text the prompt shows in place of the documents."""

from __future__ import annotations

import re
from typing import Annotated, Any

from annotated_types import Ge

from .._types import Document
from .._values.json_values import JsonObject
from .base import Refiner, local_model, local_transformers

# ExtractiveRefiner's sentence split, and the shortest sentence it keeps (longer than 5 characters)
SENTENCE_END = re.compile(r"(?<![A-Za-z]\.)(?<=[.!?])\s+")
MIN_SENTENCE = 5


def sentences(docs: list[Document]) -> list[str]:
    """The documents' texts joined by spaces, cut at sentence ends, sentences of over 5 characters."""
    return [
        part.strip()
        for part in SENTENCE_END.split(" ".join(doc.text for doc in docs))
        if len(part.strip()) > MIN_SENTENCE
    ]


class ExtractiveRefiner(Refiner):
    """The `topk` sentences most similar to the question (inner product of normalised embeddings of a
    sentence-transformers encoder, mean pooling for a plain transformers folder), in document order;
    all of them when there are fewer. Ties keep the earlier sentence."""

    name = "recomp_extractive"

    def __init__(
        self,
        model: str | None = None,
        topk: Annotated[int, Ge(1)] = 5,
        max_length: Annotated[int, Ge(1)] = 256,
        batch_size: Annotated[int, Ge(1)] = 256,
        query_prefix: str = "",
        passage_prefix: str = "",
        device: str | None = None,
    ) -> None:
        self.model_path = local_model(model)
        self.topk, self.max_length, self.encode_batch = int(topk), int(max_length), int(batch_size)
        self.query_prefix, self.passage_prefix, self.device = str(query_prefix), str(passage_prefix), device
        self._encoder: Any = None

    def load(self) -> None:
        from sentence_transformers import SentenceTransformer

        if self._encoder is None:
            self._encoder = SentenceTransformer(self.model_path, device=self.device, local_files_only=True)
            self._encoder.max_seq_length = self.max_length

    def _encode(self, texts: list[str]) -> Any:
        return self._encoder.encode(
            texts,
            batch_size=self.encode_batch,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    def refine_batch(self, items: list[tuple[str, list[Document]]]) -> list[str]:
        self.load()
        cut = [sentences(docs) for _, docs in items]
        flat = [self.passage_prefix + sentence for sents in cut for sentence in sents]
        questions = self._encode([self.query_prefix + question for question, _ in items])
        embedded = self._encode(flat) if flat else None
        out, start = [], 0
        for row, sents in enumerate(cut):
            if len(sents) <= self.topk:
                out.append(" ".join(sents))
            else:
                assert embedded is not None  # sentences to choose from were encoded
                scores = (embedded[start : start + len(sents)] @ questions[row]).tolist()
                best = sorted(range(len(sents)), key=lambda i: -scores[i])[: self.topk]
                out.append(" ".join(sents[i] for i in sorted(best)))
            start += len(sents)
        return out

    def metadata(self) -> JsonObject:
        return {"refiner": self.name, "model": self.model_path}

    def close(self) -> None:
        self._encoder = None


# AbstractiveRecompRefiner's input, RECOMP's training format
ABSTRACTIVE_PROMPT = "Question: {question}\n Document: {document}\n Summary: "


class AbstractiveRefiner(Refiner):
    """A summary of the documents for the question by a local seq2seq model (greedy `generate`, inputs cut
    at `max_input_length` tokens, outputs at `max_output_length`), FlashRAG's batches of 2."""

    name = "recomp_abstractive"

    def __init__(
        self,
        model: str | None = None,
        max_input_length: Annotated[int, Ge(1)] = 1024,
        max_output_length: Annotated[int, Ge(1)] = 512,
        batch_size: Annotated[int, Ge(1)] = 2,
        device: str | None = None,
    ) -> None:
        self.model_path = local_model(model)
        self.max_input_length, self.max_output_length = int(max_input_length), int(max_output_length)
        self.max_batch_size, self.device = int(batch_size), device or "cpu"
        self._model: Any = None
        self._tokenizer: Any = None

    def load(self) -> None:
        if self._model is None:
            self._tokenizer, self._model = local_transformers("AutoModelForSeq2SeqLM", self.model_path, self.device)

    def refine_batch(self, items: list[tuple[str, list[Document]]]) -> list[str]:
        import torch

        self.load()
        prompts = [
            ABSTRACTIVE_PROMPT.format(question=question, document="\n".join(doc.text for doc in docs))
            for question, docs in items
        ]
        inputs = self._tokenizer(
            prompts, return_tensors="pt", padding=True, truncation=True, max_length=self.max_input_length
        ).to(self.device)
        with torch.inference_mode():
            outputs = self._model.generate(**inputs, max_length=self.max_output_length)
        texts: list[str] = self._tokenizer.batch_decode(
            outputs, skip_special_tokens=True, clean_up_tokenization_spaces=False
        )  # transformers' tokenizer
        return texts

    def metadata(self) -> JsonObject:
        return {"refiner": self.name, "model": self.model_path}

    def close(self) -> None:
        self._model = self._tokenizer = None
