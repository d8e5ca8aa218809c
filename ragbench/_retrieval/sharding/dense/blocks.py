"""dense's blocks in a merged parallel build (`sharding.merged_build.analysis`): the passages' embeddings, by the encoder
a worker loads once (one GPU a worker where the cluster has GPUs); an interrupted build's blocks are its model's
only while the model's files are unchanged (`key_files`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ...dense.retriever import DEFAULT_MODEL, DenseBuilder, Encoder, model_location
from ..merged_build.analysis import BlockKind, EncoderSettings, WorkerSettings

if TYPE_CHECKING:
    from ...._registry import Registry


class DenseBlockWorker:
    def __init__(self, settings: WorkerSettings) -> None:
        self.encoder = Encoder(**settings["encoder"], registry=settings["registry"])

    def arrays(self, texts: list[str]) -> dict[str, np.ndarray]:
        return {"embeddings": self.encoder.encode_passages(texts)}


class DenseBlocks(BlockKind):
    fields: ClassVar[tuple[str, ...]] = ("embeddings",)
    gpu: ClassVar[bool] = True

    def settings(self, builder: DenseBuilder, first: str, registry: Registry) -> WorkerSettings:
        encoder = builder.encoder
        options: EncoderSettings = {
            "model": encoder.name,
            "query_instruction": encoder.query_instruction,
            "normalize": encoder.normalize,
            "batch_size": encoder.batch_size,
            "device": encoder.device,
            "query_style": encoder.query_style,
            "encoder_dtype": encoder.dtype,
        }
        return {"encoder": options, "registry": registry}

    def worker(self, settings: WorkerSettings) -> DenseBlockWorker:
        return DenseBlockWorker(settings)

    def absorb(self, builder: DenseBuilder, arrays: dict[str, np.ndarray]) -> None:
        builder.embeddings.append(arrays["embeddings"])

    def key_files(self, options: dict[str, Any]) -> list[list[Any]]:
        """Path, size and modification time (ns) of each file of the model's local folder: blocks a model since
        changed (a folder copied over, weights replaced) encoded are not taken as this model's."""
        folder = Path(model_location(str(options.get("model", DEFAULT_MODEL))))
        if not folder.is_dir():
            return []
        files = sorted(path for path in folder.rglob("*") if path.is_file())
        return [[str(path.relative_to(folder)), (stat := path.stat()).st_size, stat.st_mtime_ns] for path in files]
