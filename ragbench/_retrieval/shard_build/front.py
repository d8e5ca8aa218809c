"""The run's query side of an index built in shards (`index build --ray --shards S`, `driver`): no merged index
is needed. It reads the shards' manifest (INDEX/shards-S/manifest.json) and shards.json (`layout.shard_layout`:
every file's size and content digest checked), and the hits' documents from the shards' own docs stores
(memory-mapped; a lookup reads one line). A kind's front (its ShardKind's `front`) adds what a batch's payload
needs and how the shards' answers merge.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..._errors import ConfigError
from ..._types import Document, JsonObject
from ..base import Retriever
from ..index.built import read_manifest
from ..index.docstore import DocStore
from ..sharded.layout import Layout, shard_layout, shards_folder


class BuiltShardsFront(Retriever):
    """The shards' manifest, layout and docs stores (module docstring)."""

    def __init__(self, index: str | Path | None = None, shards: int = 1) -> None:
        if index is None:
            raise ConfigError(f"retriever {self.name} needs --retriever-arg index=DIR")
        self.folder = Path(index)
        self.manifest = read_manifest(shards_folder(self.folder, shards), self.name)
        fix = f"build its shards again: ragbench index build --ray --shards {shards} --out {self.folder} --overwrite"
        self.checked = replace(shard_layout(self.name, self.folder, shards), fix=fix)
        self.stores = [DocStore(shard.folder) for shard in self.checked.shards]
        self.starts = np.array([shard.start for shard in self.checked.shards], dtype=np.int64)

    def layout(self, shards: int) -> Layout:
        return self.checked

    def document(self, number: int, score: float | None = None) -> Document:
        """Passage `number` of the whole corpus, from its shard's docs store."""
        shard = int(np.searchsorted(self.starts, number, side="right")) - 1
        return self.stores[shard].get(number - int(self.starts[shard]), score)

    def hits(self, ids: Iterable[Iterable[int]], scores: Iterable[Iterable[float]]) -> list[list[Document]]:
        return [
            [self.document(int(i), float(s)) for i, s in zip(row, row_scores)] for row, row_scores in zip(ids, scores)
        ]

    def metadata(self) -> JsonObject:
        return self.manifest.run_metadata(self.name, self.folder)

    def contents(self) -> JsonObject:
        return self.manifest.index_contents()

    def close(self) -> None:
        for store in self.stores:
            store.close()
