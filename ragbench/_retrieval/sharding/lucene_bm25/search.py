"""A lucene_bm25 shard's search: the queries' (term number, count), scored by `lucene_bm25.lucene_scores` with the
whole index's document frequencies and statistics (`split`), ranked ties by id (`ranked_by_id`, its passages'
global id ranks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...index.damage import IndexDamage, read_array, read_json_object, typed_fields
from ...lucene.retriever import FILES_DIR, lucene_cache, lucene_scores, ranked_by_id
from ..searcher import ShardSearcher, TopK
from .split import DOC_FREQS, STATS

LUCENE_STATS: dict[str, tuple[type, ...]] = {"docs_with_terms": (int,), "total_terms": (int,)}


class LuceneShardSearch(ShardSearcher):
    def load(self) -> None:
        files = self.shard.folder / FILES_DIR
        self.offsets = np.asarray(read_array(files, "offsets.npy"), dtype=np.int64)
        self.postings, self.freqs = read_array(files, "postings.npy"), read_array(files, "freqs.npy")
        self.norms, self.id_ranks = np.asarray(read_array(files, "norms.npy")), read_array(files, "id_ranks.npy")
        self.doc_freqs = np.asarray(read_array(files, DOC_FREQS), dtype=np.int64)
        stats = read_json_object(files, STATS)
        try:
            typed_fields(STATS, stats, LUCENE_STATS, tuple(LUCENE_STATS))
        except IndexDamage as exc:
            raise IndexDamage(f"{FILES_DIR}/{exc.file}", exc.problem) from None
        self.expect(f"{FILES_DIR}/norms.npy", len(self.norms))
        self.expect(f"{FILES_DIR}/id_ranks.npy", len(self.id_ranks))
        if len(self.doc_freqs) != len(self.offsets) - 1 or int(self.offsets[-1]) != len(self.postings):
            raise IndexDamage(f"{FILES_DIR}/{DOC_FREQS}", "does not hold one count a term of offsets.npy")
        self.doc_count = int(stats["docs_with_terms"])
        self.cache = lucene_cache(
            self.options.get("k1", 0.9), self.options.get("b", 0.4), self.doc_count, int(stats["total_terms"])
        )

    def ranked(self, payload: Any, k: int) -> TopK:
        return [self.lucene_top_k(terms, k) for terms in payload]

    def lucene_top_k(self, terms: list[tuple[int, int]], k: int) -> tuple[np.ndarray, np.ndarray]:
        doc_freqs = [int(self.doc_freqs[number]) for number, _ in terms]
        docs, scores = ranked_by_id(
            *lucene_scores(terms, doc_freqs, self, self.doc_count, self.cache), self.id_ranks, k
        )
        return scores, docs
