"""The run's side of a sharded search, the part every kind shares: the unsharded retriever less its scoring files.
Each retriever kind's own front is its `sharding/KIND/front.py` (a `Front`), named by its kind object.

A front keeps what is small and per query, builds each batch's payload once (`payload`: vectors, tokens, term
numbers or words) for every shard, and makes the shards' answers into the unsharded retriever's hits (`answers`):
merged (`merge`), then made into documents as the unsharded retriever makes them. It never loads the embeddings
or postings: dense reads the index's first row (to check the encoder), faiss_index maps its index file (its first
vector, to check the encoder), tevatron_dense reads its shard files one at a time for their docids and row counts,
flashrag_bm25 checks its bm25s files memory-mapped as the unsharded retriever does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

from ..._types import Document
from ..._values.json_values import JsonObject
from ..base import RetrievalError
from .layout import Layout, shard_layout
from .searcher import ShardOptions, TopK

Answers = Sequence[list[Document] | RetrievalError]


def per_query(answers: list[TopK], query: int) -> TopK:
    return [answer[query] for answer in answers]


class SplitLayout:
    """The layout of an index split by `ragbench index shard` (`layout.shard_layout`). `front_files`: the index's
    files the front reads, where the index is in an object store (`remote.front_copy`; none: not served from one)."""

    front_files: tuple[str, ...] = ()

    def split_source(self) -> Path:
        return Path(self.folder)  # type: ignore[attr-defined]

    def layout(self, shards: int) -> Layout:
        return shard_layout(self.name, self.split_source(), shards)  # type: ignore[attr-defined]


class Front(Protocol):
    """What `retriever.ShardedRetriever` asks of a kind's front (module docstring)."""

    name: ClassVar[str]
    max_batch_size: int

    def payload(self, queries: list[str]) -> Any: ...

    def shard_options(self) -> ShardOptions: ...

    def layout(self, shards: int) -> Layout: ...

    def answers(self, queries: list[str], answers: list[TopK], k: int) -> Answers: ...

    def metadata(self) -> JsonObject: ...

    def contents(self) -> JsonObject: ...

    def close(self) -> None: ...
