"""The run's query side of an index served by its shards, one class a kind for both ways shards are made. Built in
shards (`index build --ray --shards S`, `driver`): no merged index is needed. It reads the shards' manifest
(INDEX/shards-S/manifest.json) and shards.json (`layout.shard_layout`: every file's size and content digest checked),
and the hits' documents from the shards' own docs stores (memory-mapped; a lookup reads one line). An index in an
object store (index=s3://.../INDEX) is served where it lies: its manifest and shards.json fetched
(`remote.remote_layout`), each shard's docs store read by ranged reads (`RemoteDocStore`: two a hit, never a whole
file on this node, each checked by its blocks' digests), a file its front needs (lucene_bm25's vocabulary) fetched
alone and verified (`shard_file`); the shard actors fetch their own shards' other files. Split from a one-process
index (`ragbench index shard`: shards-S holds no manifest of its own, `split`): the one index's manifest and docs
store, checked as its retriever checks them (`IndexedRetriever.check_files`), its layout read when the pool asks
(`SplitLayout`; in an object store the run reads it, `remote`). A kind's front (its ShardedKind's `shards_front`, and
`front` where the kind's split is served by the same class: bm25, lucene_bm25, dense) adds what a batch's payload
needs (`payload`, `shard_options`) and, where they do not merge by (score, passage number), how the shards' answers
merge (`answers`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ...._errors import ConfigError
from ...._storage.locations import is_remote, joined
from ...._types import Document
from ...._values.json_values import JsonObject
from ...index.built import IndexedRetriever, read_manifest, rebuild_hint
from ...index.damage import IndexDamage
from ...index.docstore import DOCS_FILE, OFFSETS_FILE, DocStore
from ...index.remote_docstore import BLOCKS_FILE, RemoteDocStore
from ..fronts import Answers, SplitLayout, per_query
from ..layout import Layout, Shard, built_in_shards, fetched_shard, shard_layout, shards_folder
from ..merge import merge_top_k
from ..remote import remote_layout
from ..searcher import ShardOptions, TopK

DOCS_STORE = (DOCS_FILE, OFFSETS_FILE)


def only(shard: Shard, names: tuple[str, ...]) -> tuple[tuple[str, int, str], ...]:
    """The records of `shard`'s files named `names`."""
    return tuple(entry for entry in shard.written if entry[0] in names)


class BuiltShardsFront(SplitLayout, IndexedRetriever, ABC):
    """The shards' manifest, layout and docs stores, or the split index's manifest and docs store (module
    docstring); a kind's front adds `payload` and `shard_options` (`sharding.fronts.Front`)."""

    checked: Layout | None = None  # built in shards: their layout, checked as the front opens

    def __init__(self, index: str | Path | None = None, shards: int = 1) -> None:
        self.url = str(index) if index is not None and is_remote(index) else None
        self.split = self.url is None and not built_in_shards(index, shards)
        self.stores: list[DocStore | RemoteDocStore] = []
        if self.split:  # the one index's manifest, files checked, docs store (`IndexedRetriever`)
            super().__init__(index)
            self.stores = [self.docs]
        elif self.url is not None:
            self.checked = self.remote_layout(self.url, shards)
            self.folder = self.checked.folder  # the local copy of its manifest.json and shards.json
            self.manifest = read_manifest(self.folder, self.name)
        else:
            self.folder = Path(index)  # type: ignore[arg-type]  # built_in_shards: a folder
            self.manifest = read_manifest(shards_folder(self.folder, shards), self.name)
            fix = rebuild_hint(self.manifest, index, shards)  # type: ignore[arg-type]  # as given: a folder
            self.checked = shard_layout(self.name, self.folder, shards, fix)
            self.stores = [DocStore(shard.folder) for shard in self.checked.shards]
        starts = [0] if self.split else [shard.start for shard in self.built.shards]
        self.starts = np.array(starts, dtype=np.int64)

    @property
    def built(self) -> Layout:
        """The layout of shards built as shards (a split's shards are read by their actors alone)."""
        assert self.checked is not None, "a split index's shards are read by their actors alone"
        return self.checked

    def remote_layout(self, url: str, shards: int) -> Layout:
        """The layout of the shards at `url`, their docs stores opened where they lie (`RemoteDocStore`)."""
        layout = remote_layout(self.name, url, None, shards)
        try:
            for shard in layout.shards:
                self.stores.append(self.docs_store(shard))
        except IndexDamage as exc:
            raise ConfigError(f"retriever {self.name}: {exc} (damaged); {layout.fix}") from None
        scoring = [
            replace(shard, written=tuple(f for f in shard.written if f[0] not in (*DOCS_STORE, BLOCKS_FILE)))
            for shard in layout.shards
        ]  # what the actors fetch: their docs stores are read here
        return replace(layout, shards=scoring)

    @staticmethod
    def docs_store(shard: Shard) -> DocStore | RemoteDocStore:
        """The docs store of `shard` in an object store, read where it lies, each read checked by the digests of its
        blocks; where the build recorded none (an earlier ragbench's), fetched whole and checked as the actors'
        files are (`fetched_shard`)."""
        written = {name: size for name, size, _ in shard.written}
        if DOCS_FILE not in written:
            raise IndexDamage(joined(shard.source, DOCS_FILE), "is not among the shard's files (shards.json)")
        if BLOCKS_FILE not in written:
            return DocStore(fetched_shard(replace(shard, written=only(shard, DOCS_STORE))).folder)
        record = fetched_shard(replace(shard, written=only(shard, (BLOCKS_FILE,)))).folder / BLOCKS_FILE
        return RemoteDocStore(shard.source, shard.stop - shard.start, written[DOCS_FILE], record)

    def shard_file(self, number: int, name: str) -> Path:
        """Shard `number`'s file `name` on this node (fetched from its object store and verified, where it is one);
        shards built as shards only."""
        shard = self.built.shards[number]
        if not shard.source:
            return shard.folder / name
        try:
            return fetched_shard(replace(shard, written=only(shard, (name,)))).folder / name
        except IndexDamage as exc:
            raise ConfigError(f"retriever {self.name}: {exc} (damaged); {self.built.fix}") from None

    @abstractmethod
    def payload(self, queries: list[str]) -> Any: ...

    @abstractmethod
    def shard_options(self) -> ShardOptions: ...

    def layout(self, shards: int) -> Layout:
        return self.checked or super().layout(shards)

    def document(self, number: int, score: float | None = None) -> Document:
        """Passage `number` of the whole corpus, from its shard's docs store."""
        shard = int(np.searchsorted(self.starts, number, side="right")) - 1
        return self.stores[shard].get(number - int(self.starts[shard]), score)

    def hits(self, ids: Iterable[Iterable[int]], scores: Iterable[Iterable[float]]) -> list[list[Document]]:
        return [
            [self.document(int(i), float(s)) for i, s in zip(row, row_scores)] for row, row_scores in zip(ids, scores)
        ]

    def answers(self, queries: list[str], answers: list[TopK], k: int) -> Answers:
        """Each query's shards' top k merged by (score, passage number), as the one index ranks them."""
        merged = [merge_top_k(per_query(answers, query), k) for query in range(len(queries))]
        return self.hits([ids for _, ids in merged], [scores for scores, _ in merged])

    def metadata(self) -> JsonObject:
        where = {"index": self.url} if self.url else {}  # in a store: its URL, not the local copy of its manifest
        return {**self.manifest.run_metadata(self.name, self.folder), **where}

    def contents(self) -> JsonObject:
        return self.manifest.index_contents()

    def close(self) -> None:
        for store in self.stores:
            store.close()
