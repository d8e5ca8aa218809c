"""FlashRAG's BM25 (`bm25_backend: bm25s`) read from the folder its index_builder wrote and searched as FlashRAG
searches it (flashrag/retriever/index_builder.py `build_bm25_index_bm25s`, retriever.py `BM25Retriever`, at
1ee5249, with the bm25s its requirements pin, 0.2.1):

- the index: bm25s's defaults (k1 1.5, b 0.75, lucene), passages (`contents` as written) tokenised by bm25s's
  `Tokenizer` with its English stopwords and PyStemmer's "english" stemmer (a corpus whose first passage langid
  judges Chinese: the Chinese stopwords, no stemmer);
- a query: `bm25s.tokenize(query)`, lower-cased runs of 2+ word characters less the English stopwords, *not
  stemmed* (so "castle" misses the index's "castl"); words outside the vocabulary add nothing, a repeated word
  counts each time; scores summed in float32 in the query's word order;
- the top k: bm25s's numba selection, whose order of tied passages (zero-score padding included) is replayed
  by `numba_top_k`; hits are rows of the corpus JSONL as `datasets` numbers them (`jsonl_rows`).

Named departures: a query with no word left (empty, stopwords only, one-letter words) is that query's
RetrievalError naming it, where FlashRAG raises for the whole batch (bm25s: "The query_tokens must be a list of
list of tokens", when it is the batch's first query; a later one gets zero-score passages); k above the corpus
size gives every passage, where FlashRAG's numba search raises SystemError.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..._errors import ConfigError, RecordError
from ..._storage.content_digest import content_digest
from ..._types import Document
from ..._values.json_values import JsonObject
from ..base import RetrievalError, Retriever
from ..corpus.jsonl_rows import JsonlRows
from ..dense.flashrag_encoder import is_chinese
from ..index.built import built_index, read_manifest, rebuild_hint
from ..index.damage import IndexDamage
from ..option_paths import option_path
from .bm25s_files import read_bm25s_index
from .numba_top_k import numba_top_k
from .retriever import BM25Builder, import_bm25s, make_tokenizer

LABEL = "retriever flashrag_bm25"
QUERY_WORDS = re.compile(r"(?u)\b\w\w+\b")  # bm25s.tokenize's token_pattern
INDEX_FILES = (
    "params.index.json",
    "vocab.index.json",
    "data.csc.index.npy",
    "indices.csc.index.npy",
    "indptr.csc.index.npy",
)
LANGUAGES = ("auto", "en", "zh")


def query_words(query: str, stopwords: frozenset[str]) -> list[str]:
    """What FlashRAG's `bm25s.tokenize([query])` makes of a query: lower-cased words of 2+ characters, stopwords
    dropped, in order, repeats kept."""
    return [word for word in QUERY_WORDS.findall(query.lower()) if word not in stopwords]


def english_stopwords() -> frozenset[str]:
    """bm25s's English stopwords (`bm25s.tokenize`'s default "english"; the same list in bm25s 0.2.1 and 0.3)."""
    import_bm25s()
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


class FlashRagBM25Builder(BM25Builder):
    """The files FlashRAG's `index_builder --retrieval_method bm25 --bm25_backend bm25s` writes into its `bm25/`
    folder, here at the top of the index folder (FlashRAG reads them there; `index_path` names the folder).
    `language`: auto (FlashRAG's: langid on the first passage), en or zh. bm25s's own copy of the corpus
    (corpus.jsonl, corpus.mmindex.json), which FlashRAG never reads (it loads `corpus_path`), is not written."""

    files_dir = "."
    empty_token = False
    backend = "numba"
    int32_pointers = True

    def __init__(self, folder: Path, language: str = "auto") -> None:
        if language not in LANGUAGES:
            raise ConfigError(f"index build --retriever flashrag_bm25: language '{language}': choose auto, en or zh")
        super().__init__(folder, k1=1.5, b=0.75, method="lucene", stopwords="en", stemmer="english")
        self.language = language

    def add(self, texts: list[str]) -> None:
        if texts:
            self.choose_language(texts[0])
        super().add(texts)

    def choose_language(self, first: str) -> None:
        """With language auto, FlashRAG's choice by the corpus's `first` passage: Chinese stopwords and no stemmer
        for Chinese (once: a language chosen stays)."""
        if self.language == "auto":
            self.language = "zh" if self.first_is_chinese(first) else "en"
            if self.language == "zh":
                self.stopwords, self.stemmer_name = "zh", "none"
                self.tokenizer = make_tokenizer("zh", "none", "regex")

    @staticmethod
    def first_is_chinese(text: str) -> bool:
        try:
            return is_chinese(text)
        except ImportError:
            raise ConfigError(
                "index build --retriever flashrag_bm25: FlashRAG picks the stopwords by the first "
                "passage's language, judged with langid: pip install langid, or pass "
                "--build-arg language=en (or zh)"
            ) from None

    def finish(self) -> JsonObject:
        options = super().finish()
        self.tokenizer.save_vocab(str(self.folder))  # FlashRAG's BM25Retriever loads both, though queries skip them
        self.tokenizer.save_stopwords(str(self.folder))
        return {**options, "language": self.language}


class FlashRagBM25Retriever(Retriever):
    """Searches the BM25 index folder FlashRAG built (bm25s backend; `index=` the folder holding params.index.json,
    FlashRAG's `index_path`) over its JSONL corpus (`corpus=`, FlashRAG's `corpus_path`), as FlashRAG does (module
    docstring). `mmap`: leave the score matrix on disk, as FlashRAG loads it."""

    name = "flashrag_bm25"
    builder = FlashRagBM25Builder

    def __init__(self, index: str | None = None, corpus: str | None = None, mmap: bool = True) -> None:
        self.folder = index_folder(index)
        corpus_path = option_path(
            LABEL, corpus, "corpus", "the JSONL corpus the index was built from, FlashRAG's corpus_path"
        )
        try:  # bm25s's files read directly: its `BM25.load` of a numba-backend index needs numba, searching does not
            files = read_bm25s_index(self.folder, mmap=bool(mmap))
        except IndexDamage as exc:
            raise ConfigError(
                f"{LABEL}: index {self.folder}: {exc} (damaged, or a file of another build); "
                f"{build_again(self.folder, corpus_path)}"
            ) from None
        self.params, self.vocab = files.params, files.vocab
        self.data, self.indices, self.indptr = files.data, files.indices, files.indptr
        passages = files.passages
        self.stopwords = english_stopwords()
        self.corpus_path = corpus_path
        self.rows = JsonlRows(corpus_path)
        if len(self.rows) != passages:
            self.rows.close()
            raise ConfigError(
                f"{LABEL}: corpus {corpus_path} holds {len(self.rows)} passages, index {self.folder} "
                f"was built over {passages}; pass corpus= the JSONL the index was built from"
            )

    def search(self, queries: list[str], k: int) -> list[list[Document] | RetrievalError]:
        return [self.answer(query, lambda words: numba_top_k(self.scores(words), k)) for query in queries]

    def answer(
        self, query: str, rank: Callable[[list[str]], tuple[np.ndarray, np.ndarray]]
    ) -> list[Document] | RetrievalError:
        """The query's hits, `rank` giving the (scores, rows) of its words; a query with no word fails alone."""
        words = query_words(query, self.stopwords)
        if not words:  # FlashRAG raises here (module docstring): this query fails, the others go on
            return RetrievalError(
                f"{LABEL}: query {json.dumps(query, ensure_ascii=False)} has no word "
                "once lower-cased and stopwords dropped; FlashRAG's BM25 raises on it"
            )
        scores, rows = rank(words)
        try:
            return [self.rows.get(int(row), float(score)) for row, score in zip(rows, scores)]
        except RecordError as exc:
            raise RetrievalError(f"{LABEL}: corpus {exc}") from None

    def scores(self, words: list[str]) -> np.ndarray:
        return word_scores(words, self, len(self.rows))

    def metadata(self) -> JsonObject:
        return {
            "retriever": self.name,
            "index": str(self.folder.resolve()),
            "corpus": str(self.corpus_path.resolve()),
            **{key: self.params.get(key) for key in ("k1", "b", "method", "version")},
            "passages": len(self.rows),
            "terms": len(self.vocab),
        }

    def contents(self) -> JsonObject:
        """The index's files and the corpus (sampled digests), so a resumed run searches the same ones."""
        return {
            "index": {name: content_digest(self.folder / name) for name in INDEX_FILES},
            "corpus": content_digest(self.corpus_path),
        }

    def close(self) -> None:
        self.rows.close()


def word_scores(words: list[str], files: Any, passages: int) -> np.ndarray:
    """Every passage's score for the query's words over `files`' vocab and score matrix (indptr, indices, data),
    added in float32 word by word, as bm25s's numba `_compute_relevance_from_scores` does."""
    scores = np.zeros(passages, dtype=np.float32)
    for term in (files.vocab[word] for word in words if word in files.vocab):
        start, end = int(files.indptr[term]), int(files.indptr[term + 1])
        scores[files.indices[start:end]] += files.data[start:end]  # a passage appears once in a term's column
    return scores


def index_folder(index: str | None) -> Path:
    hint = "the folder FlashRAG's index_builder wrote for bm25 (its index_path, holding params.index.json)"
    folder = option_path(LABEL, index, "index", hint, folder=True)
    missing = [name for name in INDEX_FILES if not (folder / name).is_file()]
    if missing and any(folder.glob("segments_*")):  # Lucene's commit point: FlashRAG's pyserini backend
        raise ConfigError(
            f"{LABEL}: index {index} is a Lucene index (FlashRAG's pyserini backend), which is not read "
            "(it needs pyserini and Java); build the bm25s one from the same corpus: ragbench index build "
            "--corpus CORPUS --retriever flashrag_bm25 --out DIR"
        )
    if missing:
        raise ConfigError(f"{LABEL}: index {index} has no {', '.join(missing)}: not a bm25s index; pass index= {hint}")
    return folder


def build_again(folder: Path, corpus: Path) -> str:
    """How to make a damaged index again: `index build --overwrite` of a folder ragbench built, else a new build."""
    if built_index(folder):
        try:
            return rebuild_hint(read_manifest(folder, FlashRagBM25Retriever.name), folder)
        except ConfigError:
            pass  # its manifest damaged too, or another retriever's: a build into a new folder
    return (
        "copy it again, or build it again with FlashRAG's index_builder or `ragbench index build --corpus "
        f"{corpus} --retriever flashrag_bm25 --out NEW_DIR`"
    )
