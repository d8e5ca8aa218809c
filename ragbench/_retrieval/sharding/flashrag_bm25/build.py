"""flashrag_bm25 built in shards: bm25's shard build (`bm25`) with FlashRAG's builder (its stopwords and stemmer by
language, bm25s's files at the top of each shard's folder, int32 pointers), the language chosen once by the
corpus's first indexed text (`prepare`) as FlashRAG chooses it. Each shard holds the files `sharding.split` cuts
from the one index. The run's hits are the passages of the corpus's rows (`corpus=`, FlashRAG's corpus_path) as
the one index's retriever reads them; FlashRAG's numba heap replayed over the shards' candidates
(`merge.merge_numba_top_k`).
"""

from __future__ import annotations

from ...._errors import ConfigError
from ...bm25.flashrag import LABEL, FlashRagBM25Builder, FlashRagBM25Retriever, english_stopwords
from ...corpus.jsonl_rows import JsonlRows
from ...option_paths import option_path
from ..bm25.build import Bm25PartBuilder
from ..build.front import BuiltShardsFront
from ..build.kind import Stats
from ..searcher import ShardOptions
from .front import FlashRagQuerySide


class FlashRagPartBuilder(Bm25PartBuilder, FlashRagBM25Builder):
    """A part tokenized as FlashRAG's builder tokenizes it (its language fixed by the driver)."""

    def options(self, vocabulary: int, postings: int) -> Stats:
        return {**super().options(vocabulary, postings), "language": self.language}


class FlashRagShardsFront(FlashRagQuerySide, BuiltShardsFront, FlashRagBM25Retriever):
    """FlashRAG's bm25 query side over shards it was built in: its query words and the corpus's rows for the hits
    (`FlashRagBM25Retriever.answer`); the shards hold the score matrix."""

    name = "flashrag_bm25"

    def __init__(self, index: str | None = None, shards: int = 1, corpus: str | None = None, mmap: bool = True) -> None:
        super().__init__(index, shards)
        self.mmap = bool(mmap)
        path = option_path(LABEL, corpus, "corpus", "the JSONL corpus the index was built from, FlashRAG's corpus_path")
        self.rows = JsonlRows(path)
        if len(self.rows) != self.manifest.doc_count:
            self.close()
            raise ConfigError(
                f"{LABEL}: corpus {path} holds {len(self.rows)} passages, the shards in {self.folder} were built over "
                f"{self.manifest.doc_count}; pass corpus= the JSONL they were built from"
            )
        self.stopwords = english_stopwords()

    def shard_options(self) -> ShardOptions:
        return {"mmap": self.mmap}

    def close(self) -> None:
        self.rows.close()
        BuiltShardsFront.close(self)
