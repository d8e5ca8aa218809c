"""lucene_bm25's sharding (`sharding.kind.ShardedKind`): its split (`split`), its run-side front (`front`: one
class, over its split and over shards it built), its shard search (`search`), its shard build (`build`: step 1's
`LucenePartBuilder`; step 2 here) and its blocks in a merged parallel build (`LuceneBlockWorker`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...._storage.json_list import write_json_list
from ...lucene.analyzer import ANALYZER_VERSION
from ...lucene.postings import analysed_postings
from ...lucene.retriever import FILES_DIR, SEGMENT_TEXT, LuceneBM25Builder, LuceneBM25Retriever, norms
from ..build.kind import Stats
from ..build.terms import merged_terms
from ..kind import BuildsBlocks, BuildsShards, Splits
from ..merged_build.analysis import WorkerSettings, from_json_array, json_array
from .build import LucenePartBuilder
from .front import LuceneFront
from .search import LuceneShardSearch
from .split import DOC_FREQS, STATS, split_lucene

if TYPE_CHECKING:
    from ...._registry import Registry


class LuceneBlockWorker:
    """A block's Lucene-analysed postings, its passages' lengths and its words, renumbered into the builder's
    vocabulary by its `add_postings` (`LuceneKind.absorb`)."""

    def arrays(self, texts: list[str]) -> dict[str, np.ndarray]:
        docs, terms, freqs, lengths, words = analysed_postings(texts)
        return {"doc": docs, "term": terms, "tf": freqs, "lengths": lengths, "words": json_array(words)}


class LuceneKind(Splits, BuildsShards, BuildsBlocks):
    """lucene_bm25 (module docstring)."""

    name = "lucene_bm25"
    front = LuceneFront
    search = LuceneShardSearch
    checked = LuceneBM25Retriever
    shards_front = LuceneFront
    fields = ("doc", "term", "tf", "lengths", "words")
    split = staticmethod(split_lucene)

    def part_builder(self, folder: Path) -> LucenePartBuilder:
        return LucenePartBuilder(folder)

    def merge(self, stats: list[Stats]) -> Stats:
        return {
            "docs_with_terms": sum(int(part["docs_with_terms"]) for part in stats),
            "total_terms": sum(int(part["total_terms"]) for part in stats),
        }

    def finish(self, folder: Path, shared: Stats, own: Stats) -> None:
        builder = LucenePartBuilder.reopened(folder)
        words, doc_freqs = merged_terms(shared["buckets"], self.term_order)
        out = folder / FILES_DIR
        out.mkdir()
        builder.write_postings(out, builder.term_places(words), len(words))
        np.save(out / "norms.npy", norms(builder.all_lengths()))
        np.save(out / "id_ranks.npy", builder.id_ranks())  # its own passages' order of ids
        np.save(out / DOC_FREQS, doc_freqs)
        write_json_list(out / "terms.json", words)
        stats = {key: shared[key] for key in ("docs_with_terms", "total_terms")}
        (out / STATS).write_text(json.dumps(stats), encoding="utf-8")
        shutil.rmtree(builder.spill)

    def options(self, shared: Stats) -> Stats:
        """The one index's manifest options."""
        return {
            "analyzer": ANALYZER_VERSION,
            "terms": shared["terms"],
            "postings": shared["postings"],
            "docs_with_terms": shared["docs_with_terms"],
            "total_terms": shared["total_terms"],
            "segment_text": SEGMENT_TEXT,
        }

    def settings(self, builder: LuceneBM25Builder, first: str, registry: Registry) -> WorkerSettings:
        return {}

    def worker(self, settings: WorkerSettings) -> LuceneBlockWorker:
        return LuceneBlockWorker()

    def absorb(self, builder: LuceneBM25Builder, arrays: dict[str, np.ndarray]) -> None:
        words = from_json_array(arrays["words"])
        builder.add_postings(arrays["doc"], arrays["term"], arrays["tf"], arrays["lengths"], words)
