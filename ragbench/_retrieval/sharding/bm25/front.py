"""The bm25 index's run-side front over its shards (`sharding.fronts`)."""

from __future__ import annotations

from typing import Any

from ...bm25.retriever import BM25Retriever, make_stemmer, query_tokens
from ...index.built import IndexedRetriever
from ...index.docstore import DOCS_FILE, OFFSETS_FILE
from ...index.staging import MANIFEST_FILE
from ..fronts import MergedHits
from ..searcher import ShardOptions


class Bm25Queries(MergedHits, IndexedRetriever):
    """The bm25 index's query side: the manifest's tokenizer, the docs store (its bm25 files are the shards')."""

    name = BM25Retriever.name
    option_types = BM25Retriever.option_types
    required_options = BM25Retriever.required_options
    front_files = (MANIFEST_FILE, DOCS_FILE, OFFSETS_FILE)

    def __init__(self, index: str | None = None, mmap: bool = True) -> None:
        super().__init__(index)
        self.mmap = bool(mmap)
        self.stopwords = self.manifest.options["stopwords"]
        self.stemmer = make_stemmer(self.manifest.options["stemmer"])
        self.jieba = self.manifest.options.get("tokenizer") == "jieba"

    def payload(self, queries: list[str]) -> Any:
        return query_tokens(queries, self.stopwords, self.stemmer, self.jieba)

    def shard_options(self) -> ShardOptions:
        return {"mmap": self.mmap}
