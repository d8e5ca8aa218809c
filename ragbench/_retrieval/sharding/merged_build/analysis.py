"""What a worker of a parallel index build makes of one block of passages (its texts, in corpus order), as arrays:
the same steps as the one-process build's `add`, each kind's own (`BlockKind`, its `ShardedKind.blocks`, in its
folder `sharding/KIND/blocks.py`): bm25 and flashrag_bm25 tokenize with bm25s, lucene_bm25 analyses as Lucene
does, dense encodes. A block's terms are numbered with a vocabulary of the block's own (in order of first sight in
the block), which the kind's `absorb` renumbers into the builder's on the driver, block after block in corpus order.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypedDict

import numpy as np

from .state import npz_bytes

if TYPE_CHECKING:
    from ...._registry import Registry


def json_array(value: Any) -> np.ndarray:
    """A JSON value as a uint8 array (npz without pickles; lone surrogates kept as JSON escapes)."""
    return np.frombuffer(json.dumps(value).encode("ascii"), dtype=np.uint8)


def from_json_array(array: np.ndarray) -> Any:
    return json.loads(array.tobytes().decode("ascii"))


class EncoderSettings(TypedDict):
    """A dense build's encoder, as `Encoder` takes it (its registry aside)."""

    model: str
    query_instruction: str | None
    normalize: bool
    batch_size: int
    device: str | None
    query_style: str
    encoder_dtype: str


class WorkerSettings(TypedDict, total=False):
    """What a worker needs to analyse a block as the driver's builder would (`BlockKind.settings`): a bm25
    build's tokenizer, a dense build's encoder and the run's registry (which finds its query style)."""

    stopwords: str
    stemmer: str
    tokenizer: str
    encoder: EncoderSettings
    registry: Registry  # carried to the Ray worker


class BlockWorker(Protocol):
    """A worker's analysis of blocks, made once an actor (a dense one loads its model once)."""

    def arrays(self, texts: list[str]) -> dict[str, np.ndarray]: ...


class BlockKind(ABC):
    """One retriever kind's blocks (module docstring), its `ShardedKind.blocks` (a plugin's too: exported by
    `ragbench.api.retrieval`): `fields` the names of the arrays a worker makes of a block (a block's file holds
    them: numpy arrays, no objects; a JSON value as `json_array`), `gpu` whether a worker takes a GPU where the
    cluster has them. On the driver, `settings` (once a build) and `absorb` (each block, in corpus order) take the
    kind's own `IndexBuilder`; the Ray actors make `worker(settings)` once each and call its `arrays(texts)`."""

    fields: ClassVar[tuple[str, ...]]
    gpu: ClassVar[bool] = False

    @abstractmethod
    def settings(self, builder: Any, first: str, registry: Registry) -> WorkerSettings:
        """What a worker needs to analyse a block as `builder` would (a dict of picklable values: the built-in kinds'
        keys are `WorkerSettings`'); `first` is the corpus's first indexed text (FlashRAG's BM25 picks its language
        by it)."""

    @abstractmethod
    def worker(self, settings: WorkerSettings) -> BlockWorker:
        """The worker of an actor (made once an actor: a dense one loads its model once)."""

    @abstractmethod
    def absorb(self, builder: Any, arrays: dict[str, np.ndarray]) -> None:
        """Give `builder` the next block's arrays, renumbered into its vocabulary."""

    def key_files(self, options: dict[str, Any]) -> list[list[Any]]:
        """Files besides the corpus whose change makes an interrupted build's blocks another build's (dense's
        model): each [path, size, modification time]."""
        return []


class BlockAnalyser:
    """The body of a Ray actor of the build's pool (`feeder`): `analyse` makes a block's file bytes
    (`state.npz_bytes`) from its texts, by its kind's worker, made once."""

    def __init__(self, blocks: BlockKind, settings: WorkerSettings) -> None:
        self.worker = blocks.worker(settings)

    def arrays(self, texts: list[str]) -> dict[str, np.ndarray]:
        return self.worker.arrays(texts)

    def analyse(self, number: int, digest: str, texts: list[str]) -> tuple[int, bytes]:
        return number, npz_bytes(self.arrays(texts), digest)
