"""Tevatron's dense index's run-side front over its shard files (`sharding.fronts`)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from ...._errors import ConfigError
from ...._storage.locations import absolute_path
from ...dense.tevatron import TevatronDenseRetriever
from ...dense.tevatron_encoder import LABEL as TEVATRON
from ...dense.tevatron_shards import read_shard
from ..fronts import Answers, per_query
from ..layout import Layout, Shard
from ..merge import merge_top_k, shard_ranges
from ..searcher import ShardOptions, TopK


class TevatronQueries(TevatronDenseRetriever):
    """Tevatron's query side: the encoder, the corpus, each row's docid; its shard files, already shards, are
    served as they are (`layout`: S actors, the files in name order cut into S runs)."""

    def read_index(self) -> tuple[Any, list[str]]:
        """The shards' dimension, row counts and docids, read one file at a time (none kept)."""
        docids: list[str] = []
        self.rows: list[int] = []
        dim = 0
        for path in self.paths:
            embeddings, shard_docids = read_shard(path)
            if dim and embeddings.shape[1] != dim:
                raise ConfigError(
                    f"{TEVATRON}: shard {path} holds {embeddings.shape[1]}-dimensional vectors, {self.paths[0]} "
                    f"{dim}-dimensional ones; pass the shards of one index"
                )
            dim = embeddings.shape[1]
            self.rows.append(len(shard_docids))
            docids += shard_docids
            del embeddings
        return SimpleNamespace(d=dim, ntotal=len(docids)), docids

    def layout(self, shards: int) -> Layout:
        files = len(self.paths)
        if shards > files:
            raise ConfigError(
                f"{TEVATRON}: --retriever-arg shards={shards}: {self.index_pattern} names {files} shard file(s); "
                f"choose 1 to {files} (each actor serves a run of whole files)"
            )
        starts = np.cumsum([0, *self.rows]).tolist()
        served = []
        for number, (first, last) in enumerate(shard_ranges(files, shards)):
            paths = tuple(map(absolute_path, self.paths[first:last]))  # the run's, not each actor's
            served.append(Shard(number, paths[0], starts[first], starts[last], paths))
        fix = "download or encode it again (BrowseComp-Plus's corpus.shard*.pkl)"
        return Layout(self.paths[0].parent, self.name, len(self.docids), served, fix=fix)

    def payload(self, queries: list[str]) -> Any:
        if not queries:
            return np.zeros((0, self.index.d), np.float32)
        return np.concatenate([self.encoder.encode(query) for query in queries])  # each alone, as unsharded

    def shard_options(self) -> ShardOptions:
        return {}

    def answers(self, queries: list[str], answers: list[TopK], k: int) -> Answers:
        merged = [merge_top_k(per_query(answers, query), k) for query in range(len(queries))]
        return [self.hits_of(ids.tolist(), scores.tolist()) for scores, ids in merged]
