"""lucene_bm25's blocks in a merged parallel build (`sharding.merged_build.analysis`): the Lucene-analysed postings, the
passages' lengths and the block's words, renumbered into the builder's vocabulary by `add_postings`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ...lucene.postings import analysed_postings
from ...lucene.retriever import LuceneBM25Builder
from ..merged_build.analysis import BlockKind, WorkerSettings, from_json_array, json_array

if TYPE_CHECKING:
    from ...._registry import Registry


class LuceneBlockWorker:
    def arrays(self, texts: list[str]) -> dict[str, np.ndarray]:
        docs, terms, freqs, lengths, words = analysed_postings(texts)
        return {"doc": docs, "term": terms, "tf": freqs, "lengths": lengths, "words": json_array(words)}


class LuceneBlocks(BlockKind):
    fields: ClassVar[tuple[str, ...]] = ("doc", "term", "tf", "lengths", "words")

    def settings(self, builder: Any, first: str, registry: Registry) -> WorkerSettings:
        return {}

    def worker(self, settings: WorkerSettings) -> LuceneBlockWorker:
        return LuceneBlockWorker()

    def absorb(self, builder: LuceneBM25Builder, arrays: dict[str, np.ndarray]) -> None:
        words = from_json_array(arrays["words"])
        builder.add_postings(arrays["doc"], arrays["term"], arrays["tf"], arrays["lengths"], words)
