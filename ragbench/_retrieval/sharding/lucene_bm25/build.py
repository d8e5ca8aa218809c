"""lucene_bm25 built in shards: each shard's files are those `split` cuts from the one index
(`lucene_bm25/`: its postings renumbered from 0, freqs, offsets and norms; the whole vocabulary, terms.json, with
each term's document frequency in the whole corpus, doc_freqs.npy; the whole corpus's docs_with_terms and
total_terms, stats.json), so a shard scores a passage bit for bit as the one index does, except its id_ranks.npy:
the order of its own passages' ids (ties across shards are broken by the id strings in the merge, `answers`).

Step 1 (`LucenePartBuilder`) analyses the part as `LuceneBM25Builder` does, spilling its postings into the shard's
folder; its vocabulary with each term's document frequency in the part goes to a file merged by term, a bucket of
terms a task (`sharding.build.terms`), and the driver gets only its passages' and terms' counts (`merge`: N and total
terms); step 2 (`finish`) reads the merged buckets in sorted order (the vocabulary numbered as the one index
numbers it, global document frequencies) and writes the shard's postings in those term numbers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ...._storage.json_list import write_json_list
from ...lucene.retriever import FILES_DIR, LuceneBM25Builder, anserini_scores, query_terms
from ..build.front import BuiltShardsFront
from ..build.kind import Stats
from ..fronts import Answers, per_query
from ..searcher import ShardOptions, TopK

WORDS, LENGTHS = "words.json", "lengths.npy"  # step 1's vocabulary (first-sight order) and lengths, in the spill


class LucenePartBuilder(LuceneBM25Builder):
    """A part's analysis (module docstring), left in its folder for step 2 (`reopened`)."""

    def analysed(self) -> Stats:
        words = list(self.vocabulary)
        write_json_list(self.spill / WORDS, words)
        lengths = self.all_lengths()
        np.save(self.spill / LENGTHS, lengths)
        doc_freqs = np.zeros(len(words), dtype=np.int64)
        for path in self.chunk_files:
            with np.load(path) as chunk:
                doc_freqs += np.bincount(chunk["term"], minlength=len(words))
        return {
            "terms": {"words": words, "doc_freqs": doc_freqs},  # merged by term, not by the driver
            "docs_with_terms": int(np.count_nonzero(lengths)),
            "total_terms": int(lengths.sum()),
        }

    @classmethod
    def reopened(cls, folder: Path) -> LucenePartBuilder:
        """The builder step 1 left in `folder`."""
        builder = cls.__new__(cls)
        builder.folder, builder.spill = folder, folder / "lucene_bm25.spill"
        words = json.loads((builder.spill / WORDS).read_text(encoding="utf-8"))
        builder.vocabulary = {word: number for number, word in enumerate(words)}
        builder.chunk_files = sorted(builder.spill.glob("chunk*.npz"))
        builder.lengths = [np.load(builder.spill / LENGTHS)]
        builder.n_docs = len(builder.lengths[0])
        return builder


class LuceneShardsFront(BuiltShardsFront):
    """lucene_bm25's query side over shards it was built in: the analyzer, the vocabulary (shard 0's terms.json,
    the whole corpus's), the shards' docs stores; ties across shards broken by id, as Anserini's searcher does."""

    name = "lucene_bm25"

    def __init__(self, index: str | None = None, shards: int = 1, k1: float = 0.9, b: float = 0.4) -> None:
        super().__init__(index, shards)
        self.k1, self.b = float(k1), float(b)
        words = json.loads(self.shard_file(0, f"{FILES_DIR}/terms.json").read_text("utf-8"))
        self.term_numbers = {word: number for number, word in enumerate(words)}

    def payload(self, queries: list[str]) -> Any:
        return [query_terms(query, self.term_numbers) for query in queries]

    def shard_options(self) -> ShardOptions:
        return {"k1": self.k1, "b": self.b}

    def answers(self, queries: list[str], answers: list[TopK], k: int) -> Answers:
        """Each query's shards' top k (each in the order of score, then id) merged: by score, then id."""
        found = []
        for query in range(len(queries)):
            parts = per_query(answers, query)
            candidates = [
                (float(score), self.document(int(number)))
                for scores, numbers in parts
                for score, number in zip(np.asarray(scores, dtype=np.float32).tolist(), numbers)
            ]
            ranked = sorted(candidates, key=lambda pair: (-pair[0], pair[1].id or ""))[:k]
            adjusted = anserini_scores(np.array([score for score, _ in ranked], dtype=np.float32))
            for (_, doc), score in zip(ranked, adjusted):
                doc.score = score
            found.append([doc for _, doc in ranked])
        return found
