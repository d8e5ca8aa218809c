"""The bm25 index's run-side front over its shards, split or built as shards (`build.front`)."""

from __future__ import annotations

from typing import Any

from ...bm25.retriever import BM25Retriever, make_stemmer, query_tokens
from ...index.docstore import DOCS_FILE, OFFSETS_FILE
from ...index.staging import MANIFEST_FILE
from ..build.front import BuiltShardsFront
from ..searcher import ShardOptions


class Bm25Front(BuiltShardsFront):
    """The bm25 index's query side: the manifest's tokenizer, the docs store(s); the shards hold its bm25 files.
    A split's manifest options are checked as `BM25Retriever` checks them."""

    name = BM25Retriever.name
    option_types = BM25Retriever.option_types
    required_options = BM25Retriever.required_options
    front_files = (MANIFEST_FILE, DOCS_FILE, OFFSETS_FILE)

    def __init__(self, index: str | None = None, shards: int = 1, mmap: bool = True) -> None:
        super().__init__(index, shards)
        self.mmap = bool(mmap)
        options = self.manifest.options
        self.stopwords, self.stemmer = options["stopwords"], make_stemmer(options["stemmer"])
        self.jieba = options.get("tokenizer") == "jieba"

    def payload(self, queries: list[str]) -> Any:
        return query_tokens(queries, self.stopwords, self.stemmer, self.jieba)

    def shard_options(self) -> ShardOptions:
        return {"mmap": self.mmap}
