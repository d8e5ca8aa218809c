"""The lucene_bm25 index's run-side front over its shards, split or built as shards (`build.front`): the analyzer,
the vocabulary (the index's terms.json, or shard 0's: the whole corpus's) and the docs store(s); the shards hold the
postings and norms. Ties across shards are broken by id, as Anserini's searcher breaks them: a split's by the one
index's id ranks (memory-mapped), shards built as shards, which hold only their own passages' ranks, by the ids of
the candidates' documents."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ...._types import Document
from ...lucene.retriever import FILES_DIR, LuceneBM25Retriever, anserini_scores, check_segment_text, query_terms
from ..bm25.front import Bm25Front
from ..build.front import BuiltShardsFront
from ..fronts import Answers, per_query
from ..merge import merge_top_k
from ..searcher import ShardOptions, TopK

TERMS, ID_RANKS = f"{FILES_DIR}/terms.json", f"{FILES_DIR}/id_ranks.npy"


class LuceneFront(BuiltShardsFront):
    """lucene_bm25's query side (module docstring); a split's manifest options are checked as `LuceneBM25Retriever`
    checks them."""

    name = LuceneBM25Retriever.name
    option_types = LuceneBM25Retriever.option_types
    required_options = LuceneBM25Retriever.required_options
    front_files = (*Bm25Front.front_files, TERMS, ID_RANKS)

    def __init__(self, index: str | None = None, shards: int = 1, k1: float = 0.9, b: float = 0.4) -> None:
        super().__init__(index, shards)
        self.k1, self.b = float(k1), float(b)
        if self.split:
            check_segment_text(self.manifest, self.folder)
            terms = self.folder / TERMS
            self.id_ranks = self.load(ID_RANKS, lambda: np.load(self.folder / ID_RANKS, mmap_mode="r"))
        else:
            terms = self.shard_file(0, TERMS)
        self.term_numbers = self.load(
            TERMS, lambda: {word: i for i, word in enumerate(json.loads(terms.read_text("utf-8")))}
        )

    def payload(self, queries: list[str]) -> Any:
        return [query_terms(query, self.term_numbers) for query in queries]

    def shard_options(self) -> ShardOptions:
        return {"k1": self.k1, "b": self.b}

    def answers(self, queries: list[str], answers: list[TopK], k: int) -> Answers:
        """Each query's shards' top k (each in the order of score, then id) merged: by score, then id."""
        if self.split:
            merged = [merge_top_k(per_query(answers, q), k, tie_ranks=self.id_ranks) for q in range(len(queries))]
            return self.hits([ids for _, ids in merged], [anserini_scores(scores) for scores, _ in merged])
        return [self.by_id(per_query(answers, query), k) for query in range(len(queries))]

    def by_id(self, parts: TopK, k: int) -> list[Document]:
        """One query's top k of the shards' `parts`, ties by the ids of their documents (read for every candidate)."""
        candidates = [
            (float(score), self.document(int(number)))
            for scores, numbers in parts
            for score, number in zip(np.asarray(scores, dtype=np.float32).tolist(), numbers)
        ]
        ranked = sorted(candidates, key=lambda pair: (-pair[0], pair[1].id or ""))[:k]
        adjusted = anserini_scores(np.array([score for score, _ in ranked], dtype=np.float32))
        for (_, doc), score in zip(ranked, adjusted):
            doc.score = score
        return [doc for _, doc in ranked]
