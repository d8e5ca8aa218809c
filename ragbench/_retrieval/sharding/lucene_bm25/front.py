"""The lucene_bm25 index's run-side front over its shards (`sharding.fronts`)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ...index.built import IndexedRetriever
from ...lucene.retriever import FILES_DIR, LuceneBM25Retriever, anserini_scores, check_segment_text, query_terms
from ..bm25.front import Bm25Front
from ..fronts import Answers, SplitLayout, per_query
from ..merge import merge_top_k
from ..searcher import ShardOptions, TopK


class LuceneQueries(SplitLayout, IndexedRetriever):
    """The lucene_bm25 index's query side: the analyzer, the vocabulary, the passages' id ranks (memory-mapped:
    ties across shards are broken by id) and the docs store; the shards hold the postings and norms."""

    name = LuceneBM25Retriever.name
    option_types = LuceneBM25Retriever.option_types
    required_options = LuceneBM25Retriever.required_options
    front_files = (*Bm25Front.front_files, f"{FILES_DIR}/terms.json", f"{FILES_DIR}/id_ranks.npy")

    def __init__(self, index: str | None = None, k1: float = 0.9, b: float = 0.4) -> None:
        super().__init__(index)
        check_segment_text(self.manifest, self.folder)
        files = self.folder / FILES_DIR
        self.k1, self.b = float(k1), float(b)
        self.term_numbers = {word: i for i, word in enumerate(json.loads((files / "terms.json").read_text("utf-8")))}
        self.id_ranks = np.load(files / "id_ranks.npy", mmap_mode="r")

    def payload(self, queries: list[str]) -> Any:
        return [query_terms(query, self.term_numbers) for query in queries]

    def shard_options(self) -> ShardOptions:
        return {"k1": self.k1, "b": self.b}

    def answers(self, queries: list[str], answers: list[TopK], k: int) -> Answers:
        merged = [merge_top_k(per_query(answers, q), k, tie_ranks=self.id_ranks) for q in range(len(queries))]
        return self.hits([ids for _, ids in merged], [anserini_scores(scores) for scores, _ in merged])
