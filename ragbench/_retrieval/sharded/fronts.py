"""The run's side of a sharded search, one class a retriever kind: the unsharded retriever less its scoring files.

A front keeps what is small and per query, builds each batch's payload once (`payload`: vectors, tokens, term
numbers or words) for every shard, and makes the shards' answers into the unsharded retriever's hits (`answers`):
merged (`merge`), then made into documents as the unsharded retriever makes them. It never loads the embeddings
or postings: dense reads the index's first row (to check the encoder), faiss_index maps its index file (its first
vector, to check the encoder), tevatron_dense reads its shard files one at a time for their docids and row counts,
flashrag_bm25 checks its bm25s files memory-mapped as the unsharded retriever does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..._errors import ConfigError
from ..._types import Document
from ..base import RetrievalError
from ..bm25.flashrag import FlashRagBM25Retriever, query_words
from ..bm25.retriever import BM25Retriever, make_stemmer, query_tokens
from ..dense.faiss_index import FaissIndexRetriever
from ..dense.retriever import DenseRetriever
from ..dense.tevatron import TevatronDenseRetriever
from ..dense.tevatron_encoder import LABEL as TEVATRON
from ..dense.tevatron_shards import read_shard
from ..index.built import IndexedRetriever
from ..index.docstore import DOCS_FILE, OFFSETS_FILE
from ..index.staging import MANIFEST_FILE
from ..lucene.retriever import FILES_DIR, LuceneBM25Retriever, anserini_scores, check_segment_text, query_terms
from .layout import Layout, Shard, shard_layout
from .merge import merge_numba_top_k, merge_top_k, shard_ranges
from .searcher import ShardOptions, TopK

Answers = Sequence[list[Document] | RetrievalError]


def per_query(answers: list[TopK], query: int) -> TopK:
    return [answer[query] for answer in answers]


class SplitLayout:
    """The layout of an index split by `ragbench index shard` (`layout.shard_layout`). `front_files`: the index's
    files the front reads, where the index is in an object store (`remote.front_copy`; none: not served from one)."""

    front_files: tuple[str, ...] = ()

    def split_source(self) -> Path:
        return Path(self.folder)  # type: ignore[attr-defined]

    def layout(self, shards: int) -> Layout:
        return shard_layout(self.name, self.split_source(), shards)  # type: ignore[attr-defined]


class MergedHits(SplitLayout):
    """Answers merged by (score, passage number) and read from the index's docs store (dense, bm25)."""

    def answers(self, queries: list[str], answers: list[TopK], k: int) -> Answers:
        merged = [merge_top_k(per_query(answers, query), k) for query in range(len(queries))]
        return self.hits([ids for _, ids in merged], [scores for scores, _ in merged])  # type: ignore[attr-defined,no-any-return]


class DenseQueries(MergedHits, DenseRetriever):
    """The dense index's query side: the encoder, the docs store; the shards hold the rows."""

    def payload(self, queries: list[str]) -> Any:
        return self.encoder.encode_queries(queries)

    def shard_options(self) -> ShardOptions:
        return {"chunk_rows": self.chunk_rows, "backend": self.backend, "corpus_rows": self.manifest.doc_count}


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


class LuceneQueries(SplitLayout, IndexedRetriever):
    """The lucene_bm25 index's query side: the analyzer, the vocabulary, the passages' id ranks (memory-mapped:
    ties across shards are broken by id) and the docs store; the shards hold the postings and norms."""

    name = LuceneBM25Retriever.name
    option_types = LuceneBM25Retriever.option_types
    required_options = LuceneBM25Retriever.required_options
    front_files = (*Bm25Queries.front_files, f"{FILES_DIR}/terms.json", f"{FILES_DIR}/id_ranks.npy")

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


class FlashRagQueries(SplitLayout, FlashRagBM25Retriever):
    """FlashRAG's bm25 query side: its words, the corpus rows; the shards hold the score matrix (this process
    checks the index's files memory-mapped, as the unsharded retriever does, and keeps its vocabulary)."""

    def payload(self, queries: list[str]) -> Any:
        return [query_words(query, self.stopwords) for query in queries]

    def shard_options(self) -> ShardOptions:
        return {"mmap": True}

    def answers(self, queries: list[str], answers: list[TopK], k: int) -> Answers:
        return [
            self.answer(query, lambda _, q=q: merge_numba_top_k(per_query(answers, q), k))  # type: ignore[misc]
            for q, query in enumerate(queries)
        ]


class FaissQueries(SplitLayout, FaissIndexRetriever):
    """FlashRAG's faiss query side: the encoder, the corpus rows, the index file memory-mapped (its header and
    vector 0, to check the encoder); the shards hold the vectors."""

    def read_index(self, mmap: bool) -> Any:
        self.mmap = mmap  # the shards' (`mmap=`: their vectors left on disk); this process maps the index
        return super().read_index(True)

    def payload(self, queries: list[str]) -> Any:
        return self.encoder.encode(queries, is_query=True) if queries else np.zeros((0, self.index.d), np.float32)

    def shard_options(self) -> ShardOptions:
        return {"mmap": self.mmap}

    def answers(self, queries: list[str], answers: list[TopK], k: int) -> Answers:
        merged = [merge_top_k(per_query(answers, query), k) for query in range(len(queries))]
        return self.documents([ids for _, ids in merged], [scores for scores, _ in merged])

    def split_source(self) -> Path:
        return self.index_path


class TevatronQueries(TevatronDenseRetriever):
    """Tevatron's query side: the encoder, the corpus, each row's docid; its shard files, already shards, are
    served as they are (`layout`: S actors, the files in name order cut into S runs)."""

    def read_index(self) -> tuple[Any, list[str]]:
        """The shards' dimension, row counts and docids, read one file at a time (none kept)."""
        docids: list[str] = []
        self.rows: list[int] = []
        dim = 0
        for path in self.paths:
            embeddings, shard_docids = read_shard(path)
            if dim and embeddings.shape[1] != dim:
                raise ConfigError(
                    f"{TEVATRON}: shard {path} holds {embeddings.shape[1]}-dimensional vectors, {self.paths[0]} "
                    f"{dim}-dimensional ones; pass the shards of one index"
                )
            dim = embeddings.shape[1]
            self.rows.append(len(shard_docids))
            docids += shard_docids
            del embeddings
        return SimpleNamespace(d=dim, ntotal=len(docids)), docids

    def layout(self, shards: int) -> Layout:
        files = len(self.paths)
        if shards > files:
            raise ConfigError(
                f"{TEVATRON}: --retriever-arg shards={shards}: {self.index_pattern} names {files} shard file(s); "
                f"choose 1 to {files} (each actor serves a run of whole files)"
            )
        starts = np.cumsum([0, *self.rows]).tolist()
        served = []
        for number, (first, last) in enumerate(shard_ranges(files, shards)):
            paths = tuple(path.absolute() for path in self.paths[first:last])  # the run's, not each actor's
            served.append(Shard(number, paths[0], starts[first], starts[last], paths))
        fix = "download or encode it again (BrowseComp-Plus's corpus.shard*.pkl)"
        return Layout(self.paths[0].parent, self.name, len(self.docids), served, fix=fix)

    def payload(self, queries: list[str]) -> Any:
        if not queries:
            return np.zeros((0, self.index.d), np.float32)
        return np.concatenate([self.encoder.encode(query) for query in queries])  # each alone, as unsharded

    def shard_options(self) -> ShardOptions:
        return {}

    def answers(self, queries: list[str], answers: list[TopK], k: int) -> Answers:
        merged = [merge_top_k(per_query(answers, query), k) for query in range(len(queries))]
        return [self.hits_of(ids.tolist(), scores.tolist()) for scores, ids in merged]


Front = DenseQueries | Bm25Queries | LuceneQueries | FlashRagQueries | FaissQueries | TevatronQueries
FRONTS: dict[str, type[Front]] = {
    "dense": DenseQueries,
    "bm25": Bm25Queries,
    "lucene_bm25": LuceneQueries,
    "flashrag_bm25": FlashRagQueries,
    "faiss_index": FaissQueries,
    "tevatron_dense": TevatronQueries,
}
