"""bm25's sharding (`sharding.kind.ShardedKind`): its split (`split`), its run-side front (`front`: one class, over
its split and over shards it built), its shard search (`search`), its shard build (`build`: step 1's
`Bm25PartBuilder`; step 2 here) and its blocks in a merged parallel build (`blocks`: a worker's tokenization;
`absorb` here)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...bm25.retriever import BM25Builder, BM25Retriever, CorpusStats
from ..build.kind import Stats, TermOrder
from ..build.terms import merged_terms
from ..kind import BuildsBlocks, BuildsShards, Splits
from ..merged_build.analysis import WorkerSettings, from_json_array
from .blocks import Bm25BlockWorker, merge_tokenizer
from .build import Bm25PartBuilder
from .front import Bm25Front
from .search import Bm25ShardSearch
from .split import split_bm25

if TYPE_CHECKING:
    from ...._registry import Registry
    from ...index.built import IndexedRetriever
    from ..build.front import BuiltShardsFront
    from ..fronts import Front
    from ..searcher import ShardSearcher


class Bm25Kind(Splits, BuildsShards, BuildsBlocks):
    """bm25 (module docstring); a build's options are `BM25Builder`'s (--build-arg)."""

    name = "bm25"
    front: type[Front] = Bm25Front  # typed as the base's: flashrag_bm25's kind is this one's
    search: type[ShardSearcher] = Bm25ShardSearch
    checked: type[IndexedRetriever] | None = BM25Retriever
    shards_front: type[BuiltShardsFront] = Bm25Front  # one front: split or built as shards
    term_order: TermOrder = "first_seen"
    fields = ("doc", "term", "tf", "lengths", "vocabulary")
    split = staticmethod(split_bm25)

    def part_builder(self, folder: Path) -> Bm25PartBuilder:
        return Bm25PartBuilder(folder, **self.build_options)

    def reopened(self, folder: Path) -> Bm25PartBuilder:
        return Bm25PartBuilder.reopened(folder, self.build_options)

    def merge(self, stats: list[Stats]) -> Stats:
        return {
            "n_docs": sum(part["n_docs"] for part in stats),
            "total_length": sum(part["total_length"] for part in stats),
            "options": stats[0]["options"],
        }

    def finish(self, folder: Path, shared: Stats, own: Stats) -> None:
        builder = self.reopened(folder)
        words, doc_freqs = merged_terms(shared["buckets"], self.term_order)
        vocab = {word: number for number, word in enumerate(words)}
        local = builder.tokenizer.get_vocab_dict()
        numbers = np.zeros(len(local), dtype=np.int64)
        for term, number in local.items():
            numbers[number] = vocab[term]
        n_docs = int(shared["n_docs"])
        corpus = CorpusStats(doc_freqs, n_docs, shared["total_length"] / n_docs)
        builder.write_files(vocab, corpus, numbers)

    def options(self, shared: Stats) -> Stats:
        """The one index's manifest options."""
        return {**shared["options"], "vocabulary": shared["terms"], "postings": shared["postings"]}

    def settings(self, builder: BM25Builder, first: str, registry: Registry) -> WorkerSettings:
        return {"stopwords": builder.stopwords, "stemmer": builder.stemmer_name, "tokenizer": builder.tokenizer_name}

    def worker(self, settings: WorkerSettings) -> Bm25BlockWorker:
        return Bm25BlockWorker(settings)

    def absorb(self, builder: BM25Builder, arrays: dict[str, np.ndarray]) -> None:
        remap = merge_tokenizer(builder.tokenizer, from_json_array(arrays["vocabulary"]))
        triples = {"doc": arrays["doc"], "term": remap[arrays["term"]], "tf": arrays["tf"]}
        builder.add_postings(triples, arrays["lengths"])
