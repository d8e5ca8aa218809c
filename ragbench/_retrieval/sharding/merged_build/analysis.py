"""What a worker of a parallel index build makes of one block of passages (its texts, in corpus order), as arrays:
the same steps as the one-process build's `add`, each kind's own (its `BuildsBlocks` members: `fields`,
`settings`, `worker`, `absorb`; a built-in kind's helpers in `sharding/KIND/blocks.py`): bm25 and flashrag_bm25 tokenize with bm25s, lucene_bm25 analyses as Lucene
does, dense encodes. A block's terms are numbered with a vocabulary of the block's own (in order of first sight in
the block), which the kind's `absorb` renumbers into the builder's on the driver, block after block in corpus order.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import numpy as np

from .state import npz_bytes

if TYPE_CHECKING:
    from ...._registry import Registry
    from ...dense.retriever import EncoderOptions


def json_array(value: Any) -> np.ndarray:
    """A JSON value as a uint8 array (npz without pickles; lone surrogates kept as JSON escapes)."""
    return np.frombuffer(json.dumps(value).encode("ascii"), dtype=np.uint8)


def from_json_array(array: np.ndarray) -> Any:
    return json.loads(array.tobytes().decode("ascii"))


class WorkerSettings(TypedDict, total=False):
    """What a worker needs to analyse a block as the driver's builder would (`BuildsBlocks.settings`): a bm25
    build's tokenizer, a dense build's encoder and the run's registry (which finds its query style)."""

    stopwords: str
    stemmer: str
    tokenizer: str
    encoder: EncoderOptions
    registry: Registry  # carried to the Ray worker


class BlockWorker(Protocol):
    """A worker's analysis of blocks, made once an actor (a dense one loads its model once)."""

    def arrays(self, texts: list[str]) -> dict[str, np.ndarray]: ...


class WorkerMaker(Protocol):
    """A kind's side of a block's analysis (a `ShardedKind`, named here by what is used, as the kind names this
    module's types)."""

    def worker(self, settings: WorkerSettings) -> BlockWorker: ...


class BlockAnalyser:
    """The body of a Ray actor of the build's pool (`feeder`): `analyse` makes a block's file bytes
    (`state.npz_bytes`) from its texts, by its kind's worker, made once."""

    def __init__(self, kind: WorkerMaker, settings: WorkerSettings) -> None:
        self.worker = kind.worker(settings)

    def arrays(self, texts: list[str]) -> dict[str, np.ndarray]:
        return self.worker.arrays(texts)

    def analyse(self, number: int, digest: str, texts: list[str]) -> tuple[int, bytes]:
        return number, npz_bytes(self.arrays(texts), digest)
