"""Queries to vectors as BrowseComp-Plus's dense searcher encodes them (searcher/searchers/faiss_searcher.py, with
Tevatron's `DenseModel`, tevatron/retriever/modeling/dense.py):

- the text is `task_prefix + query`, nothing between them (the default prefix ends in "Query:");
- the tokenizer is the model folder's, padding on the left, called on that one text with padding and truncation at
  `max_length` (8192), so it adds what the tokenizer adds (Qwen3-Embedding's ends every input with <|endoftext|>);
- the model is transformers' AutoModel loaded in `torch_dtype` (float16) with `attn_implementation` (Tevatron's
  default flash_attention_2), run under `torch.amp.autocast` of its device and without gradients;
- its last hidden state is pooled (`eos`/`last`: the last token, the last unpadded one under right padding; `cls`/
  `first`; `mean`) and L2-normalised when `normalize` (the leaderboard's commands pass --normalize).

One query at a time, as the searcher encodes them: a batch would pad, and change the sums a half-precision model
makes.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from ..._errors import ConfigError
from .flashrag_encoder import pool

TASK_PREFIX = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
POOLINGS = {
    "eos": "last",
    "last": "last",
    "cls": "cls",
    "first": "cls",
    "mean": "mean",
    "avg": "mean",
    "average": "mean",
}
TORCH_DTYPES = ("float16", "bfloat16", "float32")
LABEL = "retriever tevatron_dense"


def attention_default(device: str) -> str:
    """Tevatron's flash_attention_2 where flash-attn can run it (a GPU), else sdpa."""
    installed = importlib.util.find_spec("flash_attn") is not None
    return "flash_attention_2" if installed and device.startswith("cuda") else "sdpa"


def last_token(last_hidden_state: Any, attention_mask: Any) -> Any:
    """Tevatron's `eos` pooling: the last position when every row's is a token (left padding), else each row's last
    token."""
    import torch

    if int(attention_mask[:, -1].sum()) == attention_mask.shape[0]:
        return last_hidden_state[:, -1]
    lengths = attention_mask.sum(dim=1) - 1
    return last_hidden_state[torch.arange(last_hidden_state.shape[0], device=last_hidden_state.device), lengths]


class TevatronQueryEncoder:
    """The query encoder of BrowseComp-Plus's searcher; the options' defaults are `TevatronDenseRetriever`'s, which
    passes them all."""

    def __init__(
        self,
        model: str,
        task_prefix: str,
        max_length: int,
        pooling: str,
        normalize: bool,
        torch_dtype: str,
        attn_implementation: str | None,
        device: str | None,
    ) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        if pooling not in POOLINGS:
            raise ConfigError(f"{LABEL}: pooling {pooling!r}: choose one of {', '.join(POOLINGS)}")
        if torch_dtype not in TORCH_DTYPES:
            raise ConfigError(f"{LABEL}: torch_dtype {torch_dtype!r}: choose one of {', '.join(TORCH_DTYPES)}")
        if not isinstance(task_prefix, str):
            raise ConfigError(f"{LABEL}: task_prefix {task_prefix!r} is not a string; quote it")
        self.task_prefix, self.max_length = task_prefix, int(max_length)
        self.pooling, self.normalize, self.torch_dtype = pooling, bool(normalize), torch_dtype
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.attn_implementation = attn_implementation or attention_default(self.device)
        location = str(Path(model).expanduser())
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(location, padding_side="left")
            self.model = AutoModel.from_pretrained(
                location, dtype=getattr(torch, torch_dtype), attn_implementation=self.attn_implementation
            )
        except Exception as exc:  # a hub miss, a damaged folder, an attention the install lacks: one clear line
            raise ConfigError(
                f"{LABEL}: model {model} could not be loaded ({type(exc).__name__}: "
                f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}); pass model= a local folder of "
                "the encoder the index was built with (e.g. a download of Qwen/Qwen3-Embedding-8B)"
            ) from None
        self.model = self.model.to(self.device).eval()

    @property
    def dim(self) -> int:
        return int(self.model.config.hidden_size)

    def encode(self, query: str) -> np.ndarray:
        """One query's vector, a (1, dim) float32 array."""
        import torch

        inputs = self.tokenizer(
            self.task_prefix + query, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        inputs = {key: value.to(self.device) for key, value in inputs.items()}
        with torch.amp.autocast(self.device.split(":")[0]), torch.no_grad():
            hidden = self.model(**inputs, return_dict=True).last_hidden_state
            style = POOLINGS[self.pooling]
            if style == "last":
                vectors = last_token(hidden, inputs["attention_mask"])
            else:
                vectors = pool(None, hidden, inputs["attention_mask"], style)
            if self.normalize:
                vectors = torch.nn.functional.normalize(vectors, p=2, dim=-1)
            return np.asarray(vectors.float().cpu().numpy(), dtype=np.float32)
