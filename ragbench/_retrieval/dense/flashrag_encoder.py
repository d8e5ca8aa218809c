"""Texts to vectors as FlashRAG's `Encoder` makes them (flashrag/retriever/encoder.py, utils.py, config.py).

Everything is decided by the retrieval method's name (FlashRAG's `retrieval_method`, e.g. `e5`), by substring:

- prefix (`set_default_instruction`): `e5` -> "query: " on queries, "passage: " on passages; `bge` -> on queries
  "Represent this sentence for searching relevant passages: ", or FlashRAG's Chinese instruction when the name
  holds `zh` or the query is Chinese (langid); none otherwise. A given `instruction` replaces it as
  `instruction.strip() + " "`, on queries and passages alike (`parse_query`).
- pooling (`model2pooling` of basic_config.yaml, first key the name holds): e5 mean, bge cls, contriever mean,
  jina mean, dpr pooler; mean for any other name.
- normalisation: L2, unless the name holds `dpr`.
- a T5 model's vector is the first decoder state given a zero decoder input.

Inputs are tokenized with padding and truncation at `max_length` (FlashRAG's `retrieval_query_max_length`, 128).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..._errors import ConfigError
from ..._values.json_values import JsonObject
from ..option_paths import option_json

E5_QUERY, E5_PASSAGE = "query: ", "passage: "
BGE_QUERY = "Represent this sentence for searching relevant passages: "
BGE_QUERY_ZH = "为这个句子生成表示以用于检索相关文章："
MODEL_POOLING = {"e5": "mean", "bge": "cls", "contriever": "mean", "jina": "mean", "dpr": "pooler"}  # basic_config.yaml
POOLINGS = ("mean", "cls", "pooler")


def default_pooling(method: str) -> str:
    """FlashRAG's `set_pooling_method`: the pooling of the first model2pooling key the method's name holds."""
    return next((value for key, value in MODEL_POOLING.items() if key in method.lower()), "mean")


def needs_language_check(method: str, instruction: str | None) -> bool:
    """Whether the prefix depends on the query's language: a bge name without `zh`, no instruction given."""
    return instruction is None and "bge" in method.lower() and "zh" not in method.lower()


def is_chinese(text: str) -> bool:
    """FlashRAG's `judge_zh`: langid classifies the text as zh."""
    import langid

    return bool(text) and langid.classify(text)[0] == "zh"


def prefix(method: str, instruction: str | None, is_query: bool, text: str) -> str:
    """What FlashRAG's `parse_query` puts before `text` (a query or a passage)."""
    if instruction is not None:
        return instruction.strip() + " "
    name = method.lower()
    if "bge" in name:
        if not is_query:
            return ""
        return BGE_QUERY_ZH if "zh" in name or (needs_language_check(method, None) and is_chinese(text)) else BGE_QUERY
    if "e5" in name:
        return E5_QUERY if is_query else E5_PASSAGE
    return ""


def model_config(model: str) -> JsonObject:
    """The encoder folder's config.json, read without loading the model; a ConfigError naming what is missing."""
    path = Path(model).expanduser() / "config.json"
    if not path.is_file():
        where = "no such folder" if not path.parent.is_dir() else "no config.json in it"
        raise ConfigError(
            f"retriever faiss_index: model {model}: {where}; pass model=PATH, the local folder of the "
            "encoder the index was built with (e.g. a download of intfloat/e5-base-v2)"
        )
    config = option_json(path, f"retriever faiss_index: model {model}", "download the model again")
    if not isinstance(config, dict):
        raise ConfigError(
            f"retriever faiss_index: model {model}: config.json is not an object; download the model again"
        )
    return config


def model_dimension(config: JsonObject) -> int | None:
    """The vector size a model gives (BERT-like `hidden_size`, T5's `d_model`), None when the config says neither."""
    value = config.get("hidden_size", config.get("d_model"))
    return value if isinstance(value, int) else None


class FlashRagEncoder:
    """A transformers encoder behind FlashRAG's rules for the retrieval method `method` (module docstring);
    `pooling`, `instruction`, `normalize` override them. `fp16` halves the weights as FlashRAG's
    `retrieval_use_fp16` does. The options' defaults are `FaissIndexRetriever`'s, which passes them all."""

    def __init__(
        self,
        model: str,
        method: str,
        pooling: str | None,
        instruction: str | None,
        normalize: bool | None,
        max_length: int,
        batch_size: int,
        fp16: bool,
        device: str | None,
    ) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.method = method
        self.pooling = pooling or default_pooling(method)
        self.instruction = instruction
        self.normalize = "dpr" not in method.lower() if normalize is None else bool(normalize)
        self.max_length, self.batch_size = int(max_length), int(batch_size)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        location = str(Path(model).expanduser())
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(location, use_fast=True)
            self.model = AutoModel.from_pretrained(location).eval().to(self.device)
        except Exception as exc:  # a damaged folder: one clear line
            raise ConfigError(
                f"retriever faiss_index: model {model} could not be loaded ({type(exc).__name__}: "
                f"{exc}); pass model=PATH, a local transformers folder"
            ) from None
        if fp16:
            self.model = self.model.half()
        self.is_t5 = "T5" in type(self.model).__name__

    def texts(self, texts: list[str], is_query: bool) -> list[str]:
        return [prefix(self.method, self.instruction, is_query, text) + text for text in texts]

    def encode(self, texts: list[str], is_query: bool = True, max_length: int | None = None) -> np.ndarray:
        """float32 vectors, one row per text, in batches of `batch_size`, cut at `max_length` tokens (the
        encoder's query length unless given)."""
        parts = [
            self._encode_batch(
                self.texts(texts[start : start + self.batch_size], is_query), max_length or self.max_length
            )
            for start in range(0, len(texts), self.batch_size)
        ]
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, self.dim), dtype=np.float32)

    @property
    def dim(self) -> int:
        return int(model_dimension(self.model.config.to_dict()) or 0)

    def _encode_batch(self, texts: list[str], max_length: int) -> np.ndarray:
        import torch

        with torch.inference_mode():
            inputs = self.tokenizer(texts, max_length=max_length, padding=True, truncation=True, return_tensors="pt")
            inputs = {key: value.to(self.device) for key, value in inputs.items()}
            if self.is_t5:
                decoder_input_ids = torch.zeros(
                    (inputs["input_ids"].shape[0], 1), dtype=torch.long, device=inputs["input_ids"].device
                )
                vectors = self.model(**inputs, decoder_input_ids=decoder_input_ids, return_dict=True).last_hidden_state[
                    :, 0, :
                ]
            else:
                output = self.model(**inputs, return_dict=True)
                vectors = pool(
                    output.get("pooler_output"), output.get("last_hidden_state"), inputs["attention_mask"], self.pooling
                )
            if self.normalize:
                vectors = torch.nn.functional.normalize(vectors, dim=-1)
            array: np.ndarray = vectors.detach().cpu().numpy().astype(np.float32, order="C")  # torch's tensor
            return array


def pool(pooler_output: Any, last_hidden_state: Any, attention_mask: Any, method: str) -> Any:
    """FlashRAG's `pooling` (retriever/utils.py): masked mean, the first token, or the model's pooler output."""
    if last_hidden_state is None and method in ("mean", "cls"):
        method = "pooler"
    if method == "mean":
        hidden = last_hidden_state.masked_fill(~attention_mask[..., None].bool(), 0.0)
        return hidden.sum(dim=1) / attention_mask.sum(dim=1)[..., None]
    if method == "cls":
        return last_hidden_state[:, 0]
    return pooler_output
