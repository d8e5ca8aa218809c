"""dense's sharding (`sharding.kind.ShardedKind`): its split (`split`), its run-side front (`front`: one class, over
its split and over shards it built), its shard search (`search`), its shard build (`build`'s docstring: step 1
counts a shard's passages, step 2 here encodes the chunks its rows fall in) and its blocks in a merged parallel
build: the passages' embeddings, by the encoder a worker loads once (one GPU a worker where the cluster has GPUs);
an interrupted build's blocks are its model's only while the model's files are unchanged (`key_files`)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...._values.options import construct
from ...dense.retriever import DEFAULT_MODEL, EMBEDDINGS_FILE, DenseBuilder, DenseRetriever, Encoder, model_location
from ...index.remote_docstore import write_block_record
from ..build.kind import Stats
from ..kind import BuildsBlocks, BuildsShards, Splits
from ..merged_build.analysis import WorkerSettings
from .build import EMBEDDINGS_BLOCKS, ChunkTexts, PassageCount
from .front import DenseFront
from .search import DenseShardSearch
from .split import split_dense

if TYPE_CHECKING:
    from ...._registry import Registry


class DenseBlockWorker:
    def __init__(self, settings: WorkerSettings) -> None:
        self.encoder = Encoder(settings["encoder"], registry=settings["registry"])

    def arrays(self, texts: list[str]) -> dict[str, np.ndarray]:
        return {"embeddings": self.encoder.encode_passages(texts)}


class DenseKind(Splits, BuildsShards, BuildsBlocks):
    """dense (module docstring); a build's options are `DenseBuilder`'s."""

    name = "dense"
    front = DenseFront
    search = DenseShardSearch
    checked = DenseRetriever
    shards_front = DenseFront
    fields = ("embeddings",)
    gpu = True
    split = staticmethod(split_dense)

    def prepare(self, first_text: str) -> None:
        with tempfile.TemporaryDirectory() as scratch:  # the builder's .npy goes there, unwritten
            builder = self.builder(Path(scratch))
            self.described = builder.finish()  # the manifest's options, as the one-process build writes them
            del builder  # the model: each worker loads its own

    def builder(self, folder: Path) -> DenseBuilder:
        """The one-process build's builder of the build's options (an unknown or mistyped one refused as there)."""
        label = "index build --retriever dense"
        builder: DenseBuilder = construct(
            DenseBuilder, self.build_options, label, positional=(folder,), injected={"registry": self.registry}
        )
        return builder

    def encodes_on_gpu(self) -> bool:
        """Step 2 encodes: on a GPU where the cluster has one, unless the build names another device."""
        device = self.build_options.get("device")
        return device is None or str(device).startswith("cuda")

    def part_builder(self, folder: Path) -> PassageCount:
        return PassageCount(folder)

    def merge(self, stats: list[Stats]) -> Stats:
        counts = [int(part["passages"]) for part in stats]
        return {
            "folders": [str(part["folder"]) for part in stats],
            "starts": np.concatenate([[0], np.cumsum(counts)]).tolist(),
        }

    def shards_read(self, number: int, shared: Stats) -> list[int]:
        """The shards its first and last chunk of rows reach into (`finish` encodes whole chunks of the corpus, as
        the one-process build does)."""
        starts: list[int] = shared["starts"]
        start, stop, chunk = starts[number], starts[number + 1], self.text.chunk_size
        first = start - start % chunk
        end = min(first + ((stop - 1 - first) // chunk + 1) * chunk, starts[-1])
        return [
            shard
            for shard in range(len(starts) - 1)
            if shard != number and starts[shard] < end and starts[shard + 1] > first
        ]

    def finish(self, folder: Path, shared: Stats, own: Stats) -> None:
        folders: list[str] = shared["folders"]
        starts: list[int] = shared["starts"]
        number = folders.index(folder.name)
        start, stop, total = starts[number], starts[number + 1], starts[-1]
        chunk = self.text.chunk_size
        builder = self.builder(folder)  # writes folder/embeddings.npy
        texts = ChunkTexts(folder.parent, folders, starts[:-1], self.text.title)
        try:
            for first in range(start - start % chunk, stop, chunk):
                vectors = builder.encoder.encode_passages(texts.texts(first, min(first + chunk, total)))
                builder.embeddings.append(vectors[max(start, first) - first : min(stop, first + chunk) - first])
        finally:
            texts.close()
        builder.embeddings.close()
        write_block_record(folder, (EMBEDDINGS_FILE,), EMBEDDINGS_BLOCKS)  # what the run's check of row 0 reads by

    def options(self, shared: Stats) -> Stats:
        return dict(self.described)

    def settings(self, builder: DenseBuilder, first: str, registry: Registry) -> WorkerSettings:
        return {"encoder": builder.encoder.options, "registry": registry}

    def worker(self, settings: WorkerSettings) -> DenseBlockWorker:
        return DenseBlockWorker(settings)

    def absorb(self, builder: DenseBuilder, arrays: dict[str, np.ndarray]) -> None:
        builder.embeddings.append(arrays["embeddings"])

    def key_files(self, options: Stats) -> list[list[Any]]:
        """Path, size and modification time (ns) of each file of the model's local folder: blocks a model since
        changed (a folder copied over, weights replaced) encoded are not taken as this model's."""
        folder = Path(model_location(str(options.get("model", DEFAULT_MODEL))))
        if not folder.is_dir():
            return []
        files = sorted(path for path in folder.rglob("*") if path.is_file())
        return [[str(path.relative_to(folder)), (stat := path.stat()).st_size, stat.st_mtime_ns] for path in files]
